"""The question modal for `ask_question`: the question, suggestions as buttons, free text.

Esc (like Ctrl+C) ends the whole turn, as it does while the agent works: the screen dismisses
with None and the app interrupts the turn (docs/adr/0031).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Markdown

from forge.agent.events import QuestionAsked
from forge.text_safety import terminal_safe


class QuestionScreen(ModalScreen[str | None]):
    """Shows the agent's question; dismisses with the answer text, or None when the user ends
    the turn (Esc)."""

    CSS_PATH = "question.tcss"
    BINDINGS = [Binding("escape", "end_turn", "End the turn")]

    def __init__(self, request: QuestionAsked) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="question-dialog"):
            yield Label("The agent asks", id="question-title")
            # The answer box is docked: a long question or many suggestions scroll above it.
            yield Input(placeholder="Type an answer and press Enter", id="question-answer")
            with VerticalScroll(id="question-body"):
                yield Markdown(terminal_safe(self.request.question), id="question-text")
                with Vertical(id="question-suggestions"):
                    for index, suggestion in enumerate(self.request.suggestions):
                        yield Button(
                            Content(terminal_safe(suggestion)),
                            id=f"suggestion-{index}",
                            classes="suggestion",
                        )

    def on_mount(self) -> None:
        self.query_one("#question-answer", Input).focus()

    def action_end_turn(self) -> None:
        """End the whole turn (Esc) instead of answering."""
        self.dismiss(None)

    @on(Button.Pressed, ".suggestion")
    def _suggestion_pressed(self, event: Button.Pressed) -> None:
        index = int((event.button.id or "suggestion-0").removeprefix("suggestion-"))
        self.dismiss(self.request.suggestions[index])

    @on(Input.Submitted, "#question-answer")
    def _answer_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
