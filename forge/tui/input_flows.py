"""What the prompt's `@path` mentions and `!command` lines do in the app (docs/adr/0030).

Kept out of `app.py`: the app calls `turn_events` for every turn it starts and
`user_command_events` for a line starting with "!". Both run in the app's turn worker, so the UI
never waits for a file read or a command, Esc cancels them like a turn, and their events render
as a turn's do. Heavy modules are imported inside the functions: the first frame needs none.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.agent.events import AgentEvent
    from forge.session.core import Session
    from forge.session.events import SessionEvent
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.prompt_input import PromptInput

EMPTY_COMMAND = "Type a shell command after `!`, e.g. `!git status`."
BUSY_COMMAND = (
    "A turn is running: wait for it to end (or press Esc) before running a `!` command. "
    "The command is back in the prompt."
)


def turn_events(
    session: Session, text: str, model: str = "", typed: str = ""
) -> AsyncIterator[SessionEvent]:
    """One turn for `text` on `model` ("" = the session's), its `@` mentions first expanded
    by the session (in a thread; `AttachmentsAdded` comes first when there were any).
    `typed`: what the user typed, when `text` expands it."""
    return session.run_turn(text, model=model or None, typed=typed or None)


async def user_command_events(
    text: str, chat: ChatView, prompt: PromptInput, session: Session, *, busy: bool
) -> tuple[str, AsyncIterator[AgentEvent]] | None:
    """The "!command" `text`, and its events to run in the turn worker (no approval; Esc
    cancels it; with `tools.bang_to_conversation`, the model sees it next turn); None, said in
    the `chat`, when there is no command or a turn is running (`busy`)."""
    from forge.session.prompt_syntax import shell_escape_command

    command = shell_escape_command(text) or ""
    if not command:
        await chat.add_notice(EMPTY_COMMAND, kind="error")
        return None
    if busy:
        await chat.add_notice(BUSY_COMMAND, kind="error")
        if not prompt.text.strip():
            prompt.load_text(text)
            prompt.move_cursor(prompt.document.end)
        return None
    return command, session.run_command(command)
