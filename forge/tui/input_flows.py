"""What the prompt's `@path` mentions and `!command` lines do in the app (docs/adr/0030).

Kept out of `app.py`: the app calls `turn_events` for every turn it starts and
`run_user_command` for a line starting with "!". Both run in the app's turn worker, so the UI
never waits for a file read or a command, Esc cancels them like a turn, and their events render
as a turn's do. Heavy modules are imported inside the functions: the first frame needs none.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from forge.agent.events import AgentEvent
    from forge.session.core import Session
    from forge.tui.app import ForgeApp
    from forge.tui.widgets.chat import ChatView

EMPTY_COMMAND = "Type a shell command after `!`, e.g. `!git status`."
BUSY_COMMAND = (
    "A turn is running: wait for it to end (or press Esc) before running a `!` command. "
    "The command is back in the prompt."
)


@dataclass
class AttachmentsShown(Message):
    """The files a message's mentions attached, and the mentions that attached nothing."""

    attached: list[str]
    problems: list[str]


async def turn_events(
    post: ForgeApp, runtime: Session, text: str, model: str = ""
) -> AsyncGenerator[AgentEvent, None]:
    """One turn for `text` on `model` ("" = the session's), its `@` mentions first expanded
    by the session (in a thread); posts `AttachmentsShown` to `post` before the turn's first
    event when there were any."""
    from forge.session.events import AttachmentsAdded

    async for event in runtime.run_turn(text, model=model or None):
        if isinstance(event, AttachmentsAdded):
            post.post_message(AttachmentsShown(list(event.attached), list(event.problems)))
        else:
            yield event


async def show_attachments(chat: ChatView, message: AttachmentsShown) -> None:
    """One chat row per attached file, one error row per mention not attached."""
    for line in message.attached:
        await chat.add_notice(line, kind="attachment")
    for problem in message.problems:
        await chat.add_notice(f"{problem}; the message was sent without it.", kind="error")


async def run_user_command(app: ForgeApp, text: str) -> None:
    """Run the "!command" `text` in the workspace in the turn worker (no approval; Esc
    cancels it); with `tools.bang_to_conversation`, the model sees it next turn."""
    from forge.agent.shell_escape import shell_escape_command

    command = shell_escape_command(text) or ""
    if not command:
        await app.chat.add_notice(EMPTY_COMMAND, kind="error")
        return
    if app.busy:
        await app.chat.add_notice(BUSY_COMMAND, kind="error")
        if not app.prompt.text.strip():
            app.prompt.load_text(text)
            app.prompt.move_cursor(app.prompt.document.end)
        return
    app.busy = True
    app.status.show_activity(f"running !{command[:40]}…")
    app.run_events(app.runtime.run_command(command))
