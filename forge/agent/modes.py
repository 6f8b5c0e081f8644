"""Permission modes: how much the agent may do without asking (see docs/adr/0029).

- read-only: nothing that writes or runs. Forge's own reading tools run; a tool that writes
  files or runs commands is refused with a tool error the model can read ("read-only mode:
  …"). An MCP tool is allowed only when its server marks it read-only (the MCP
  `readOnlyHint` annotation); then the ask-mode rules below still decide whether to ask.
- ask: the default. Writes and commands ask unless `tools.auto_approve`, the command
  allowlist or an "always" answer of this session allows them.
- accept-edits: file edits (`write_file`, `apply_diff`) run without asking; everything else
  as in ask mode (commands and MCP tools still ask).
- auto: everything runs without asking (what `forge run --yes` does).

Pure logic, no I/O: `ApprovalPolicy` holds the current mode and consults `mode_verdict`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the TUI imports this module before its first frame: keep it light
    from forge.agent.tools.base import Tool


class PermissionMode(StrEnum):
    """The four modes, by the names the CLI, the config and the status pane use."""

    READ_ONLY = "read-only"
    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    AUTO = "auto"


MODE_ORDER: tuple[PermissionMode, ...] = (
    PermissionMode.READ_ONLY,
    PermissionMode.ASK,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.AUTO,
)
"""The order the mode key cycles through (after auto comes read-only again)."""

MODE_NAMES: tuple[str, ...] = tuple(mode.value for mode in MODE_ORDER)
"""The accepted spellings, for `--mode` and `tools.mode`."""

EDIT_TOOLS = frozenset({"write_file", "apply_diff"})
"""The file-editing tools accept-edits mode approves."""

MODE_TITLES: dict[PermissionMode, str] = {
    PermissionMode.READ_ONLY: "Read-only",
    PermissionMode.ASK: "Ask",
    PermissionMode.ACCEPT_EDITS: "Accept edits",
    PermissionMode.AUTO: "Auto",
}
"""Each mode's name for people (an editor's mode menu); the value is its id."""

MODE_DESCRIPTIONS: dict[PermissionMode, str] = {
    PermissionMode.READ_ONLY: "no writes, no commands",
    PermissionMode.ASK: "asks before writes and commands",
    PermissionMode.ACCEPT_EDITS: "file edits approved, commands ask",
    PermissionMode.AUTO: "everything approved",
}
"""One line per mode for the status pane and notices."""

ModeVerdict = Literal["allow", "refuse", "rules"]
""""allow": run without asking; "refuse": never run; "rules": the ask-mode rules decide."""


def next_mode(mode: PermissionMode) -> PermissionMode:
    """The mode after `mode` in `MODE_ORDER`, wrapping around."""
    return MODE_ORDER[(MODE_ORDER.index(mode) + 1) % len(MODE_ORDER)]


def is_read_only(tool: Tool) -> bool:
    """Whether `tool` changes nothing: Forge's non-mutating tools, and MCP tools their server
    annotates `readOnlyHint: true` (the tool's `read_only` attribute)."""
    declared = getattr(tool, "read_only", None)
    if isinstance(declared, bool):
        return declared
    return not tool.mutates


def mode_verdict(mode: PermissionMode, tool: Tool) -> ModeVerdict:
    """What `mode` alone says about a call of `tool`."""
    if mode is PermissionMode.READ_ONLY:
        return "rules" if is_read_only(tool) else "refuse"
    if mode is PermissionMode.AUTO:
        return "allow"
    if mode is PermissionMode.ACCEPT_EDITS and tool.name in EDIT_TOOLS:
        return "allow"
    return "rules"


def refusal_text(tool: Tool) -> str:
    """The tool error a call refused in read-only mode returns to the model."""
    if tool.name == "execute_command":
        what = "running commands is not allowed"
    elif tool.name in EDIT_TOOLS:
        what = "changing files is not allowed"
    elif tool.name == "web_fetch":
        what = "web_fetch may reach only the domains in tools.web_fetch.allow_domains"
    else:
        what = f"{tool.name} is not marked read-only, so it is not allowed"
    return (
        f"read-only mode: {what}. Read and plan only; the user can switch modes "
        "to let you make changes."
    )
