"""What the session's MCP servers tell the person, as events (no UI code): a server that
failed to start, crashed, is down for the session, or was started or stopped by a config
change; tools a server listed that are left out (malformed, too large, a name taken). The
TUI shows them in the chat; `forge run` prints them on stderr (and as a jsonl record)."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Literal

from forge.config.settings import McpServerSettings

NoticeKind = Literal["start_failed", "crashed", "down", "reloaded", "tools_left_out"]


@dataclass(frozen=True, slots=True)
class McpServerNotice:
    """Something happened to an MCP server in the background."""

    server: str
    """The server's name ("" for a `reloaded` notice about several)."""
    kind: NoticeKind
    reason: str = ""
    """Why, in plain words (for `reloaded`: what was started, stopped or restarted, and which
    server failed to start and why; for `tools_left_out`: each tool left out and why, joined
    by "; ")."""
    failed: bool = False
    """For `reloaded`: a server the reload started failed (its tools are unavailable)."""

    @property
    def is_error(self) -> bool:
        """Whether tools became unavailable."""
        return self.kind != "reloaded" or self.failed

    def text(self, hint: str = "see /mcp") -> str:
        """One plain sentence: which server, why, and what happens next (`hint` is where to
        look for more, "" for none)."""
        look = f"; {hint}" if hint else ""
        if self.kind == "start_failed":
            return (
                f"MCP server {self.server} failed to start: {self.reason}. "
                f"Its tools are unavailable{look}."
            )
        if self.kind == "crashed":
            return (
                f"MCP server {self.server} stopped: {self.reason}. It is restarted on the next "
                "call of one of its tools (once per session)."
            )
        if self.kind == "down":
            return (
                f"MCP server {self.server} is down (crashed twice this session): {self.reason}. "
                f"Its tools are unavailable for the rest of the session{look}."
            )
        if self.kind == "tools_left_out":
            return f"MCP server {self.server}: tools left out: {self.reason}{look}."
        if self.failed:
            return f"MCP servers reloaded: {self.reason}. A server that failed has no tools{look}."
        return f"MCP servers reloaded: {self.reason}."


def plain_reason(error: BaseException, settings: McpServerSettings, described: str) -> str:
    """`described` (the exception as "Type: text") in plainer words where the cause is known:
    a missing command, a command that cannot be run, a server that cannot be reached."""
    if settings.transport == "stdio" and isinstance(error, FileNotFoundError):
        return f"command not found '{settings.command}'"
    if settings.transport == "stdio" and isinstance(error, PermissionError):
        return f"command '{settings.command}' cannot be run (permission denied)"
    if isinstance(error, OSError) and error.errno == errno.ECONNREFUSED:
        return f"cannot connect to {settings.url}"
    if type(error).__name__ == "ConnectError":
        return f"cannot connect to {settings.url} ({error})"
    return described
