"""The small question asked before unsaved settings are thrown away."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from forge.text_safety import terminal_safe


class DiscardChangesScreen(ModalScreen[bool]):
    """Asks whether to discard unsaved edits; dismisses with True to discard, False to stay."""

    DEFAULT_CSS = """
    DiscardChangesScreen {
        align: center middle;
        background: $background 40%;
    }
    DiscardChangesScreen > #discard-dialog {
        width: 50;
        height: auto;
        padding: 1 2;
        border: thick $warning 80%;
        background: $surface;
    }
    DiscardChangesScreen #discard-question {
        margin-bottom: 1;
    }
    DiscardChangesScreen #discard-buttons {
        height: auto;
        align-horizontal: right;
    }
    DiscardChangesScreen Button {
        margin-left: 2;
    }
    """

    BINDINGS = [
        Binding("escape,n", "keep_editing", "Keep editing"),
        Binding("y,d", "discard", "Discard"),
    ]

    def __init__(self, changed_labels: list[str]) -> None:
        super().__init__()
        self.changed_labels = changed_labels

    def compose(self) -> ComposeResult:
        """The question, what would be lost, and the two answers."""
        with Vertical(id="discard-dialog"):
            # Labels name MCP servers, which a config file names: text, never markup.
            changed = terminal_safe(", ".join(self.changed_labels))
            question = Content.assemble(
                "Discard unsaved changes?\n", (f"Changed: {changed}", "dim")
            )
            yield Static(question, id="discard-question")
            with Horizontal(id="discard-buttons"):
                yield Button("Keep editing", id="keep-editing")
                yield Button("Discard", id="discard", variant="error")

    def on_mount(self) -> None:
        """Start on the safe answer."""
        self.query_one("#keep-editing", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Answer with the pressed button."""
        event.stop()
        self.dismiss(event.button.id == "discard")

    def action_keep_editing(self) -> None:
        """Go back to the settings without discarding."""
        self.dismiss(False)

    def action_discard(self) -> None:
        """Throw the edits away."""
        self.dismiss(True)
