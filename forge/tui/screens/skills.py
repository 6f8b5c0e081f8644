"""The `/skills` screen: every skill with its source, size and state; Space (or Enter)
enables or disables the highlighted one, Esc closes and keeps the changes (docs/adr/0046)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static
from textual.widgets.selection_list import Selection

from forge.text_safety import terminal_safe


@dataclass(frozen=True, slots=True)
class SkillRow:
    """One skill as the screen shows it."""

    name: str
    detail: str
    """Source, size and flags ("loaded", "user only"), one line."""
    enabled: bool


class SkillsScreen(ModalScreen[list[str] | None]):
    """Returns the names of the skills left disabled when closed with changes, else None."""

    CSS_PATH = "skills.tcss"
    BINDINGS = [Binding("escape,q", "close", "Close")]

    def __init__(self, rows: list[SkillRow], problems: int = 0) -> None:
        super().__init__()
        self.rows = rows
        self.problems = problems

    def compose(self) -> ComposeResult:
        with Vertical(id="skills-body"):
            yield Static(
                "Skills — Space enables or disables the highlighted skill; Esc closes "
                "(saved in skills.disabled in your config).",
                id="skills-title",
                markup=False,
            )
            yield SelectionList[str](
                *(
                    Selection(
                        Content(f"{row.name}  {terminal_safe(row.detail)}"),  # not markup
                        row.name,
                        row.enabled,
                    )
                    for row in self.rows
                ),
                id="skills-list",
            )
            if self.problems:
                yield Static(
                    f"{self.problems} skill file(s) could not be used: /skills list says why.",
                    markup=False,
                )

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def action_close(self) -> None:
        """Close; the disabled names when anything changed."""
        enabled = set(self.query_one(SelectionList).selected)
        before = {row.name for row in self.rows if row.enabled}
        if enabled == before:
            self.dismiss(None)
            return
        self.dismiss(sorted(row.name for row in self.rows if row.name not in enabled))
