"""Forge's own slash commands, written once for every front end (docs/adr/0059, Part 3).

Each entry says the command's name, how its argument is written, what it does, the `Session`
member it calls (its verb, `reports.cost` for a role's; "" where the front end does the work
itself, e.g. /clear builds a new session) and which front ends offer it. The TUI's command
table (`forge.tui.command_table`: help, completion, the palette) and `forge acp`'s available
commands (`forge.acp.commands`) are both read from here; a front end keeps only how it runs a
command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FrontEnd = Literal["tui", "acp"]

TUI: frozenset[FrontEnd] = frozenset({"tui"})
BOTH: frozenset[FrontEnd] = frozenset({"tui", "acp"})


@dataclass(frozen=True, slots=True)
class CatalogCommand:
    """One of Forge's slash commands."""

    name: str
    """Without the "/"."""
    description: str
    """One line, as help lists it."""
    arguments: str = ""
    """How the argument is written in help ("NAME", "[instructions]"); "" when none."""
    argument_required: bool = False
    hint: str = ""
    """What the argument is, for an editor's input hint ("" for none)."""
    verb: str = ""
    """The `Session` member the command calls; "" when the front end does the work."""
    offered_by: frozenset[FrontEnd] = BOTH
    editor_description: str = ""
    """The description in an editor, where its command does less than the TUI's (no key
    bindings, no compaction history); "" when it is `description`."""

    def described_for(self, front_end: FrontEnd) -> str:
        """The description `front_end` shows."""
        if front_end == "acp" and self.editor_description:
            return self.editor_description
        return self.description


COMMANDS: tuple[CatalogCommand, ...] = (
    CatalogCommand(
        "settings",
        "Settings: models, API key, context, tools (F2)",
        verb="apply_settings",
        offered_by=TUI,
    ),
    CatalogCommand(
        "compact",
        "Summarize the conversation now, optionally guided",
        "[instructions]",
        hint="instructions",
        verb="compact",
    ),
    CatalogCommand(
        "context",
        "Show what fills the context window and recent compactions",
        verb="reports.context",
        editor_description="Show what fills the context window",
    ),
    CatalogCommand(
        "cost",
        "Show the session's cost per model and what compaction saved",
        verb="reports.cost",
        editor_description="Show the session's cost per model",
    ),
    CatalogCommand("clear", "Start a new session with an empty conversation", offered_by=TUI),
    CatalogCommand(
        "model",
        "Switch the model for this session",
        "NAME",
        argument_required=True,
        hint="model name",
        verb="apply_settings",
    ),
    CatalogCommand(
        "mode",
        "Permission mode: read-only, ask, accept-edits or auto",
        hint="mode",
        verb="set_mode",
        offered_by=frozenset({"acp"}),  # the TUI's mode is a key (Shift+Tab) and the status line
    ),
    CatalogCommand("copy", "Copy the last answer, or its N-th code block", "[N]", offered_by=TUI),
    CatalogCommand(
        "help", "Show commands and key bindings", editor_description="List Forge's commands"
    ),
    CatalogCommand("undo", "Restore the files the last turn changed", verb="history.undo"),
    CatalogCommand(
        "rewind",
        "Go back to before a turn: files, conversation, or both",
        verb="history.restore",
        offered_by=TUI,
    ),
    CatalogCommand(
        "sessions", "Pick one of this workspace's sessions to resume", "[ID]", offered_by=TUI
    ),
    CatalogCommand(
        "rename",
        "Name this session (lists and the header show it)",
        "NAME",
        argument_required=True,
        verb="history.rename",
        offered_by=TUI,
    ),
    CatalogCommand(
        "fork",
        "Continue in a new session holding the conversation before a turn",
        "[TURN]",
        offered_by=TUI,
    ),
    CatalogCommand(
        "export",
        "Write this session as Markdown, HTML or JSON",
        "[md|html|json] [PATH]",
        verb="messages",
        offered_by=TUI,
    ),
    CatalogCommand("mcp", "MCP servers: status and tools", verb="reports.mcp", offered_by=TUI),
    CatalogCommand(
        "trust",
        "Workspace trust: what the workspace would run; change it",
        "[revoke]",
        offered_by=TUI,
    ),
    CatalogCommand(
        "hooks",
        "Hooks: each one's event, matcher, command, source and trust",
        verb="reports.hooks",
        offered_by=TUI,
    ),
    CatalogCommand(
        "sandbox",
        "Sandbox: what confines the model's commands, and why not",
        verb="sandbox",
        editor_description="What confines the model's commands, and why not",
    ),
    CatalogCommand("tasks", "Background commands: state, live output; stop one", offered_by=TUI),
    CatalogCommand(
        "skills",
        "Skills: list them; enable or disable one",
        "[list|enable|disable]",
        verb="skills",
        offered_by=TUI,
    ),
    CatalogCommand("quit", "Exit Forge", offered_by=TUI),
)
"""Every one of Forge's own commands, in the order help lists them."""


def offered_by(front_end: FrontEnd) -> tuple[CatalogCommand, ...]:
    """The commands `front_end` offers, in the catalogue's order."""
    return tuple(command for command in COMMANDS if front_end in command.offered_by)
