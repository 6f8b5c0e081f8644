"""The dialog shown when /undo or /rewind would overwrite files edited since Forge wrote them.

Dismisses with "overwrite" (restore them too), "keep" (restore the others, leave these) or
None (Esc: restore nothing).
"""

from __future__ import annotations

from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from forge.text_safety import terminal_safe

ConflictAnswer = Literal["overwrite", "keep"]
_ANSWERS: dict[str, ConflictAnswer] = {"overwrite": "overwrite", "keep": "keep"}


class RestoreConflictScreen(ModalScreen["ConflictAnswer | None"]):
    """Names the files changed since Forge wrote them and asks what to do."""

    CSS_PATH = "rewind.tcss"
    BINDINGS = [
        Binding("o", "answer('overwrite')", "Overwrite them"),
        Binding("k", "answer('keep')", "Keep my edits"),
        Binding("escape,ctrl+c", "cancel", "Cancel"),
    ]

    def __init__(self, paths: list[str], what: str = "") -> None:
        """`what` names the restore, e.g. 'Undoing “add the parser”'."""
        super().__init__()
        self.paths = paths
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(id="conflict-dialog"):
            yield Label("Changed since Forge wrote them", id="conflict-title")
            if self.what:
                yield Static(terminal_safe(self.what), id="conflict-what", markup=False)
            with VerticalScroll(id="conflict-files"):
                paths = terminal_safe("\n".join(f"• {path}" for path in self.paths))
                yield Static(paths, markup=False)  # file names may hold any character
            yield Static(
                "Overwrite: restore them too, losing these edits. Keep: restore only the "
                "other files. Esc: restore nothing.",
                markup=False,
            )
            with Horizontal(id="conflict-buttons"):
                yield Button(Content("Overwrite [o]"), id="conflict-overwrite", variant="error")
                yield Button(Content("Keep my edits [k]"), id="conflict-keep", variant="primary")
                yield Button(Content("Cancel [Esc]"), id="conflict-cancel")

    def action_answer(self, answer: str) -> None:
        """Overwrite ("overwrite") or keep ("keep") the edited files."""
        if answer in _ANSWERS:
            self.dismiss(_ANSWERS[answer])

    def action_cancel(self) -> None:
        """Restore nothing."""
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "conflict-cancel":
            self.action_cancel()
        else:
            self.action_answer((event.button.id or "").removeprefix("conflict-"))
