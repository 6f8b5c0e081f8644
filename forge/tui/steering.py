"""The TUI's side of steering (issue 40, docs/adr/0057).

Enter during a turn queues the message (it waits for the turn's end); `STEER_KEY`, shown in
the footer as `steer` while a turn runs, sends it *now*: the session adds it to the running
turn at its next safe point (after the running tool call, before the next request) and a
`SteeringAdded` event — carried to the chat by `SteeringAddedShown` — shows it where it was added.
A steered message the turn ended without adding (Esc, an error) is not lost: it is queued
again, or after Esc put back into the prompt. Up on an empty prompt during a turn first takes
back the last queued message (then walks the history as before).

Alt+S: an Alt+letter reaches an application through tmux (Ctrl+Enter does not; Alt+Enter
arrives as Enter; Ctrl+J adds a line), and the binding has priority so the prompt's text
area never sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from forge.session.core import Session
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.chat_blocks import UserMessageBlock
    from forge.tui.widgets.prompt_input import PromptInput

STEER_KEY = "alt+s"
"""The key that steers the prompt's text into the running turn."""
STEERED_NOTICE = "Steering: your message is added after the running tool call"


class SteeringHost(Protocol):
    """What steering needs of the app."""

    busy: bool
    session: Session
    chat: ChatView
    queued: list[tuple[str, UserMessageBlock]]

    @property
    def prompt(self) -> PromptInput: ...

    def notify(self, message: str, *, timeout: float | None = None) -> None: ...


def steer_prompt(app: SteeringHost) -> bool:
    """Send the prompt's text into the running turn; False (nothing taken) when no turn runs
    or the prompt is empty — Enter's way applies then."""
    if not app.busy or not app.prompt.text.strip():
        return False
    text = app.prompt.take_text()
    if app.session.steer(text):
        app.notify(STEERED_NOTICE, timeout=3)
        return True
    app.prompt.load_text(text)  # the turn ended meanwhile: nothing lost, Enter sends it
    return False


def take_back_queued(app: SteeringHost) -> str | None:
    """The last queued message, taken out of the queue (its chat block removed), for the
    prompt; None when nothing is queued or no turn runs."""
    if not app.busy or not app.queued:
        return None
    _, block = app.queued.pop()
    block.remove()
    if block.expansion_block is not None:
        block.expansion_block.remove()
    return block.text


async def requeue_unsent(app: SteeringHost, *, cancelled: bool) -> None:
    """Steered messages the turn ended without adding: queued first (the next turn is
    theirs), or after Esc put back into the prompt like the queued ones."""
    unsent = app.session.unsent_steering()
    if not unsent:
        return
    if cancelled:
        prompt = app.prompt
        prompt.load_text("\n\n".join([*unsent, *([prompt.text] if prompt.text.strip() else [])]))
        prompt.move_cursor(prompt.document.end)
        return
    for position, text in enumerate(unsent):
        block = await app.chat.add_user_message(text, queued=True)
        app.queued.insert(position, (text, block))
