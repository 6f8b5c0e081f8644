"""The workspace-trust dialog: the programs the workspace's own files would start, each named
with its command line, and three answers — *Trust*, *Not now*, *Never for this folder*
(docs/adr/0034). Esc is *Not now*. Everything from the files is shown as plain text."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from forge.agent.trust import ProgramSource
from forge.agent.trust.programs import printable
from forge.agent.trust.sources import describe_programs

TrustChoice = Literal["trust", "not_now", "never"]


class TrustScreen(ModalScreen[TrustChoice]):
    """Asks whether the workspace's own definitions may run; dismisses with the choice."""

    CSS_PATH = "trust.tcss"
    BINDINGS = [
        Binding("t", "choose('trust')", "Trust"),
        Binding("n,escape", "choose('not_now')", "Not now"),
        Binding("v", "choose('never')", "Never for this folder"),
    ]

    def __init__(
        self,
        workspace: Path,
        sources: list[ProgramSource],
        refused_variables: list[str],
        status: str = "",
    ) -> None:
        """`sources`: the files to decide about; `refused_variables`: the `${VAR}` names
        they read that `trust.env_allowlist` does not allow; `status`: where they stand."""
        super().__init__()
        self.workspace = workspace
        self.sources = sources
        self.refused_variables = refused_variables
        self.status = status

    def compose(self) -> ComposeResult:
        lines: list[str] = []
        for source in self.sources:
            lines.append(f"{source.file}:")
            lines.extend(f"  {line}" for line in describe_programs(source))
        with Vertical(id="trust-dialog"):
            yield Label("Trust this workspace?", id="trust-title")
            intro = f"{printable(str(self.workspace))}\n"
            if self.status:
                intro += f"{self.status}\n"
            intro += "Its own files define programs Forge would start, as you:"
            yield Static(intro, id="trust-intro", markup=False)
            with VerticalScroll(id="trust-programs"):
                yield Static("\n".join(lines), markup=False, id="trust-program-list")
            note = (
                "Trust only a repository whose authors you trust. Until then none of these "
                "runs; a new or changed definition asks again."
            )
            if self.refused_variables:
                names = ", ".join(f"${{{name}}}" for name in self.refused_variables)
                note += f"\nNot in trust.env_allowlist, so left empty: {printable(names)}."
            yield Static(note, id="trust-note", markup=False)
            with Horizontal(id="trust-buttons"):
                yield Button(Content("Trust [t]"), id="trust", variant="warning")
                yield Button(Content("Not now [n]"), id="not_now", variant="primary")
                yield Button(Content("Never for this folder [v]"), id="never", variant="error")

    def on_mount(self) -> None:
        # The safe answer has the focus: Enter pressed by habit does not run anything.
        self.query_one("#not_now", Button).focus()

    def action_choose(self, choice: TrustChoice) -> None:
        """Answer with `choice`."""
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = event.button.id
        if choice in ("trust", "not_now", "never"):
            self.dismiss(choice)  # type: ignore[arg-type]  # the ids are the choices
