"""The /rewind dialogs: the session's turns to go back before, then what to restore.

`RewindScreen` lists the turns (first words of the user message, files changed, and a mark on
turns that ran shell commands, which no checkpoint can undo); choosing one opens
`RewindModeScreen` (files and conversation, conversation only, files only). The rewind itself
is done by `forge.tui.checkpoint_commands` with the `RewindChoice` this dismisses with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, OptionList, Static
from textual.widgets.option_list import Option

from forge.session.restore import RewindPoint
from forge.text_safety import terminal_safe

RewindMode = Literal["both", "conversation", "files"]
_MODES: dict[str, RewindMode] = {"both": "both", "conversation": "conversation", "files": "files"}
COMMANDS_MARK = "⚠ ran commands (not undoable)"
MAX_FILES_SHOWN = 2


def row_label(point: RewindPoint, number: int) -> Content:
    """A turn as the list shows it, in two lines: the number and first words; then the files
    its checkpoint holds and marks."""
    details = []
    if point.files:
        shown = ", ".join(point.files[:MAX_FILES_SHOWN])
        more = len(point.files) - MAX_FILES_SHOWN
        details.append(f"files: {shown}" + (f" +{more}" if more > 0 else ""))
    elif not point.note:
        details.append("no file changes")
    if point.note:
        details.append(point.note)
    if not point.in_context:
        details.append("compacted")
    first = Content(f"{number}. {terminal_safe(point.title())}")
    second = Content.styled("   " + terminal_safe(" · ".join(details)), "dim")
    if point.ran_commands:
        second += Content.styled(f" · {COMMANDS_MARK}", "$text-warning")
    return first + "\n" + second


@dataclass(frozen=True, slots=True)
class RewindChoice:
    """The turn to go back before, and what to restore."""

    turn: RewindPoint
    mode: RewindMode


class TurnList(OptionList):
    """The turns, oldest first. Up and Down stop at the ends instead of wrapping: the list
    opens on the newest turn, and a Down there must not jump to the oldest one."""

    def action_cursor_up(self) -> None:
        """Move the highlight to the previous turn (it stays on the first)."""
        if self.highlighted != 0:
            super().action_cursor_up()

    def action_cursor_down(self) -> None:
        """Move the highlight to the next turn (it stays on the newest)."""
        if self.highlighted != self.option_count - 1:
            super().action_cursor_down()


class RewindScreen(ModalScreen[RewindChoice | None]):
    """Lists the turns, newest last and highlighted; dismisses with the choice or None."""

    CSS_PATH = "rewind.tcss"
    BINDINGS = [Binding("escape,ctrl+c", "cancel", "Cancel")]

    def __init__(self, rows: list[RewindPoint]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-dialog"):
            yield Label("Rewind to before a turn", id="rewind-title")
            options = [
                Option(row_label(row, number), id=f"turn-{number - 1}")
                for number, row in enumerate(self.rows, start=1)
            ]
            yield TurnList(*options, id="rewind-turns")
            yield Static(
                "Enter: choose · Esc: cancel · commands run by the agent cannot be undone",
                id="rewind-keys",
                markup=False,
            )

    def on_mount(self) -> None:
        turns = self.query_one("#rewind-turns", OptionList)
        turns.focus()
        if self.rows:
            turns.highlighted = len(self.rows) - 1

    def action_cancel(self) -> None:
        """Close without rewinding."""
        self.dismiss(None)

    @on(OptionList.OptionSelected, "#rewind-turns")
    def _turn_chosen(self, event: OptionList.OptionSelected) -> None:
        index = int((event.option.id or "turn-0").removeprefix("turn-"))
        row = self.rows[index]
        commands_since = any(later.ran_commands for later in self.rows[index:])

        # The choice is drawn alone: the list's frame would peek out around it on a small
        # terminal (two top borders at 80x24); Esc there brings the list back.
        dialog = self.query_one("#rewind-dialog")

        def chosen(mode: RewindMode | None) -> None:
            if mode is not None:
                self.dismiss(RewindChoice(row, mode))
                return
            dialog.display = True
            self.query_one("#rewind-turns", OptionList).focus()

        dialog.display = False
        self.app.push_screen(RewindModeScreen(row, commands_since), callback=chosen)


class RewindModeScreen(ModalScreen["RewindMode | None"]):
    """What to restore to the point before the chosen turn; Esc goes back to the list."""

    CSS_PATH = "rewind.tcss"
    BINDINGS = [
        Binding("b", "choose('both')", "Files and conversation"),
        Binding("c", "choose('conversation')", "Conversation only"),
        Binding("f", "choose('files')", "Files only"),
        Binding("escape,ctrl+c", "back", "Back"),
    ]

    def __init__(self, row: RewindPoint, commands_since: bool = False) -> None:
        """`commands_since`: this turn or a later one ran shell commands."""
        super().__init__()
        self.row = row
        self.commands_since = commands_since or row.ran_commands

    def compose(self) -> ComposeResult:
        with Vertical(id="rewind-mode-dialog"):
            yield Label("Rewind to before:", id="rewind-mode-title")
            title = terminal_safe(self.row.title(20))
            yield Static(title, id="rewind-mode-turn", markup=False)
            if self.commands_since:
                yield Static(
                    "Shell commands ran in this turn or later: their effects stay.",
                    id="rewind-mode-warning",
                    markup=False,
                )
            yield Static(
                "Both: files and conversation · Conversation: files stay as they are · "
                "Files: the conversation goes on · Esc: back",
                id="rewind-mode-help",
                markup=False,
            )
            with Horizontal(id="rewind-mode-buttons"):
                yield Button(Content("Both [b]"), id="mode-both", variant="primary")
                yield Button(Content("Conversation [c]"), id="mode-conversation")
                yield Button(Content("Files [f]"), id="mode-files")

    def action_choose(self, mode: str) -> None:
        """Restore `mode` ("both", "conversation", "files")."""
        if mode in _MODES:
            self.dismiss(_MODES[mode])

    def action_back(self) -> None:
        """Back to the list."""
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_choose((event.button.id or "").removeprefix("mode-"))
