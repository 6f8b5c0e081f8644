"""The question modal for `ask_question`: the question, suggestions as buttons, free text.

Esc answers explicitly that the user declined, so the agent is never left waiting.
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

DECLINED_ANSWER = "(The user declined to answer.)"


class QuestionScreen(ModalScreen[str]):
    """Shows the agent's question; dismisses with the answer text."""

    CSS_PATH = "question.tcss"
    BINDINGS = [Binding("escape,ctrl+c", "decline", "Decline to answer")]

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

    def action_decline(self) -> None:
        """Answer that the user declined (Esc)."""
        self.dismiss(DECLINED_ANSWER)

    @on(Button.Pressed, ".suggestion")
    def _suggestion_pressed(self, event: Button.Pressed) -> None:
        index = int((event.button.id or "suggestion-0").removeprefix("suggestion-"))
        self.dismiss(self.request.suggestions[index])

    @on(Input.Submitted, "#question-answer")
    def _answer_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.dismiss(event.value.strip())
