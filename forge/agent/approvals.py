"""Which tool calls run without asking the user (see docs/adr/0006-approvals.md).

Pure logic, no I/O: the agent loop asks `ApprovalPolicy.decide` before every call and shows an
approval request when the answer is "ask".

The permission mode (`forge.agent.modes`) speaks first: read-only refuses every tool that is
not read-only, auto allows everything. Then a write to Forge's own configuration (the caller
passes why it is protected, see `forge.agent.protected_paths`) asks, whatever allows the tool
otherwise (docs/adr/0034). Then accept-edits allows the file-editing tools. Otherwise a call
is allowed without asking when any of these holds, checked in order:
1. the tool does not mutate anything (reads, searches, listings, the turn-ending tools);
2. (auto mode, checked above);
3. the tool is in `auto_approve` or was approved "always" this session, or it is an MCP tool
   (`server__tool`) and `auto_approve` holds `server__*`;
4. it is `execute_command` and its command matches an allowlist entry (below);
5. a skill loaded in the session pre-approves it (its `allowed-tools`, given by `granted`;
   `forge.agent.skills.allowed_tools`, docs/adr/0046).
A tool's own settings may allow a call too (`allowed_without_asking`: `web_fetch` to a domain
of `tools.web_fetch.allow_domains`, docs/adr/0055); such a call also runs in read-only mode.

Allowlist matching is by words, not text: the command and the entry are split with
`shlex.split`, and the entry's words must be the command's first words, exactly. So the entry
"git status" allows "git status --short" but not "git statusx" or "echo git status". A command
holding any shell metacharacter (; & | ` $ ( ) < > or a line break) is never allowed by the
allowlist, because the words after the prefix could start a second command.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from forge.agent.modes import PermissionMode, mode_verdict
from forge.agent.skills.allowed_tools import command_prefixes, granted_tools
from forge.agent.tools.base import Tool
from forge.llm.messages import ToolCall

Decision = Literal["allow", "ask", "refuse"]

COMMAND_TOOL = "execute_command"
"""The tool whose calls the command allowlist can approve."""

SERVER_WILDCARD = "__*"
"""An `auto_approve` entry ending in it (`github__*`) approves every tool of that MCP server."""

SHELL_METACHARACTERS = frozenset(";&|`$()<>\n\r")
"""Characters that can chain, substitute or redirect in /bin/sh; `$` covers `$(`, `${` and
variables, whose expansion the allowlist cannot see through."""


class ApprovalPolicy:
    """Decides, per tool call, whether it may run now ("allow") or needs the user ("ask")."""

    def __init__(
        self,
        auto_approve: Iterable[str] = (),
        command_allowlist: Iterable[str] = (),
        approve_all: bool = False,
        mode: PermissionMode | str = PermissionMode.ASK,
        granted: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        """`auto_approve`: tool names that never ask. `command_allowlist`: command prefixes
        (e.g. "git status", "pytest") that `execute_command` may run without asking.
        `approve_all`: never ask (the same as `mode="auto"`). `mode`: the permission mode,
        changeable later through the `mode` attribute. `granted`: the `allowed-tools` entries
        of the skills loaded now (asked at each call)."""
        self.granted = granted
        self.auto_approve = frozenset(auto_approve)
        self.command_allowlist = tuple(command_allowlist)
        self.mode = PermissionMode.AUTO if approve_all else PermissionMode(mode)
        self._approved_this_session: set[str] = set()
        self._allowlist_words = [
            words for words in (_split(entry) for entry in self.command_allowlist) if words
        ]

    @property
    def approve_all(self) -> bool:
        """Whether every call runs without asking (auto mode)."""
        return self.mode is PermissionMode.AUTO

    @property
    def approved_this_session(self) -> frozenset[str]:
        """Tool names approved "always" during this session."""
        return frozenset(self._approved_this_session)

    def approve_always(self, tool_name: str) -> None:
        """Allow every later call of `tool_name` this session (the "always" answer)."""
        self._approved_this_session.add(tool_name)

    def decide(self, call: ToolCall, tool: Tool, protected: str | None = None) -> Decision:
        """ "allow" if `call` may run without asking the user, "refuse" if the mode forbids
        it (read-only), else "ask". `protected`: why the call writes Forge's configuration
        (then it asks in every mode but auto and read-only, which refuses)."""
        verdict = mode_verdict(self.mode, tool)
        listed = _listed(tool, call)
        if verdict == "refuse":
            return "allow" if listed else "refuse"
        if self.mode is PermissionMode.AUTO:
            return "allow"
        if protected:
            return "ask"
        if verdict == "allow":
            return "allow"
        if not tool.mutates or listed:
            return "allow"
        if tool.name in self.auto_approve or tool.name in self._approved_this_session:
            return "allow"
        if self._server_approved(tool.name):
            return "allow"
        if tool.name == COMMAND_TOOL and self.command_is_allowlisted(_command_of(call)):
            return "allow"
        if self.granted is not None and self._skill_approved(call, tool, self.granted()):
            return "allow"
        return "ask"

    def _skill_approved(self, call: ToolCall, tool: Tool, entries: Sequence[str]) -> bool:
        """Whether the loaded skills' `allowed-tools` entries approve `call`."""
        if not entries:
            return False
        if tool.name in granted_tools(entries):
            return True
        if tool.name != COMMAND_TOOL:
            return False
        command = _command_of(call)
        if not command or any(character in SHELL_METACHARACTERS for character in command):
            return False
        words = _split(command)
        return bool(words) and any(
            (prefix_words := _split(prefix)) and words[: len(prefix_words)] == prefix_words
            for prefix in command_prefixes(entries)
        )

    def _server_approved(self, tool_name: str) -> bool:
        """Whether an `auto_approve` entry `server__*` covers `tool_name` (an MCP tool)."""
        return any(
            entry.endswith(SERVER_WILDCARD) and tool_name.startswith(entry[:-1])
            for entry in self.auto_approve
        )

    def command_is_allowlisted(self, command: str | None) -> bool:
        """Whether `command` starts with the words of an allowlist entry and has no shell
        metacharacters. Unparseable commands (e.g. an open quote) are never allowlisted."""
        if not command or any(character in SHELL_METACHARACTERS for character in command):
            return False
        words = _split(command)
        if not words:
            return False
        return any(words[: len(entry)] == entry for entry in self._allowlist_words)


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _listed(tool: Tool, call: ToolCall) -> bool:
    """Whether the tool's own settings allow this call without asking (`web_fetch` to a
    domain of `tools.web_fetch.allow_domains`): the tool's `allowed_without_asking`."""
    allowed = getattr(tool, "allowed_without_asking", None)
    if allowed is None:
        return False
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return False
    return bool(allowed(arguments))


def _command_of(call: ToolCall) -> str | None:
    try:
        command = call.parsed_arguments().get("command")
    except ValueError:
        return None
    return command if isinstance(command, str) else None
