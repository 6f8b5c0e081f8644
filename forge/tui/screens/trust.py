"""The workspace-trust dialog: the programs the workspace's own files would start, each named
with its command line, and three answers — *Trust*, *Not now*, *Never for this folder*
(docs/adr/0034). Esc is *Not now*. Everything from the files is shown as plain text.

The text scrolls with ↓/↑/PgDn/PgUp from the start (the answers stay docked below), a line
says "more below" while some of it is out of sight, and on a re-ask each definition that is
new or changed since the last answer is marked (docs/adr/0048)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from forge.session.trust import ProgramSource, describe_programs, printable

TrustChoice = Literal["trust", "not_now", "never"]
Mark = Literal["new", "changed"]
MORE_BELOW = "▼ more below · ↓ or PgDn scrolls"
CHROME_LINES = 9
"""Lines of the dialog that are not its scrolling text: borders, title, buttons, the
"more below" line and the spacing between them."""


class TrustScreen(ModalScreen[TrustChoice]):
    """Asks whether the workspace's own definitions may run; dismisses with the choice."""

    CSS_PATH = "trust.tcss"
    BINDINGS = [
        Binding("t", "choose('trust')", "Trust"),
        Binding("n,escape", "choose('not_now')", "Not now"),
        Binding("v", "choose('never')", "Never for this folder"),
        Binding("down", "scroll_text(1)", "Scroll down", show=False),
        Binding("up", "scroll_text(-1)", "Scroll up", show=False),
        Binding("pagedown", "scroll_text(0, 1)", "Page down", show=False),
        Binding("pageup", "scroll_text(0, -1)", "Page up", show=False),
    ]

    def __init__(
        self,
        workspace: Path,
        sources: list[ProgramSource],
        refused_variables: list[str],
        status: str = "",
        marks: Mapping[tuple[str, str], Mark] | None = None,
    ) -> None:
        """`sources`: the files to decide about; `refused_variables`: the `${VAR}` names
        they read that `trust.env_allowlist` does not allow; `status`: where they stand;
        `marks`: (file, program name) of the definitions new or changed since the last
        answer."""
        super().__init__()
        self.workspace = workspace
        self.sources = sources
        self.refused_variables = refused_variables
        self.status = status
        self.marks = dict(marks or {})

    def compose(self) -> ComposeResult:
        lines: list[str] = []
        for source in self.sources:
            lines.append(f"{source.file}:")
            for program, line in zip(source.programs, describe_programs(source), strict=True):
                mark = self.marks.get((source.file, program.name))
                lines.append(f"  ({mark}) {line}" if mark else f"  {line}")
        with Vertical(id="trust-dialog"):
            yield Label("Trust this workspace?", id="trust-title")
            with VerticalScroll(id="trust-body"):
                intro = f"{printable(str(self.workspace))}\n"
                if self.status:
                    intro += f"{self.status}\n"
                intro += "Its own files define programs Forge would start, as you:"
                yield Static(intro, id="trust-intro", markup=False)
                yield Static("\n".join(lines), markup=False, id="trust-program-list")
                note = (
                    "Trust only a repository whose authors you trust. Until then none of these "
                    "runs; a new or changed definition asks again."
                )
                if self.refused_variables:
                    names = ", ".join(f"${{{name}}}" for name in self.refused_variables)
                    note += f"\nNot in trust.env_allowlist, so left empty: {printable(names)}."
                yield Static(note, id="trust-note", markup=False)
            yield Static(MORE_BELOW, id="trust-more", markup=False)
            with Horizontal(id="trust-buttons"):
                yield Button(Content("Trust [t]"), id="trust", variant="warning")
                yield Button(Content("Not now [n]"), id="not_now", variant="primary")
                yield Button(Content("Never for this folder [v]"), id="never", variant="error")

    def on_mount(self) -> None:
        # The safe answer has the focus: Enter pressed by habit does not run anything.
        self.query_one("#not_now", Button).focus()
        body = self.query_one("#trust-body", VerticalScroll)
        body.can_focus = False  # the keys scroll it from the buttons (the screen's bindings)
        self.watch(body, "scroll_y", self._show_more, init=False)
        self.watch(body, "virtual_size", self._show_more, init=False)
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Bound the scrolling text to what the screen leaves beside the dialog's chrome."""
        body = self.query_one("#trust-body", VerticalScroll)
        body.styles.max_height = max(3, self.size.height - CHROME_LINES)
        self.call_after_refresh(self._show_more)

    def _show_more(self) -> None:
        body = self.query_one("#trust-body", VerticalScroll)
        self.query_one("#trust-more", Static).display = body.scroll_y < body.max_scroll_y

    @property
    def more_below(self) -> bool:
        """Whether some of the text is below what the dialog shows."""
        return bool(self.query_one("#trust-more", Static).display)

    def action_scroll_text(self, lines: int, pages: int = 0) -> None:
        """Scroll the text `lines` lines, or `pages` pages, down (negative: up)."""
        body = self.query_one("#trust-body", VerticalScroll)
        step = lines or pages * max(1, body.scrollable_content_region.height - 1)
        body.scroll_to(y=body.scroll_y + step, animate=False)

    def action_choose(self, choice: TrustChoice) -> None:
        """Answer with `choice`."""
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id
        if choice in ("trust", "not_now", "never"):
            self.dismiss(choice)  # type: ignore[arg-type]  # the ids are the choices
