"""The approval and question dialogs of a running turn (the app's part of them): show the
dialog in a worker, answer the request's future, and close a dialog the agent no longer waits
for (an interrupted turn).

A dialog dismissed with None (Esc) ends the turn the way Esc does while the agent works: the
turn worker is cancelled, so the agent records the waiting call and the calls after it as
cancelled and sends no further request (docs/adr/0031)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import Screen

from forge.agent.events import ApprovalRequested, QuestionAsked
from forge.tui.attention import Attention
from forge.tui.messages import ApprovalRequestedShown, QuestionAnswered, QuestionAskedShown
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.widgets.chat import ChatView


class Dialogs:
    """Puts a turn's requests to the user; `interrupt` ends the turn (Esc on a dialog)."""

    def __init__(
        self, app: App[Any], chat: ChatView, attention: Attention, interrupt: Callable[[], None]
    ) -> None:
        self._app = app
        self._chat = chat
        self._attention = attention
        self._interrupt = interrupt

    async def approval_needed(self, message: ApprovalRequestedShown) -> None:
        """Mark the call's row, call attention and ask (in a dialog worker)."""
        if not message.request.agent:  # a subagent's call has no row of its own
            await self._chat.mark_awaiting_approval(message.request.call)
        self._attention.call("approval", message.request.call.name)
        self._app.run_worker(self._ask_approval(message.request), **_DIALOG_WORKER)

    async def _ask_approval(self, request: ApprovalRequested) -> None:
        """Show the approval dialog and answer the request's future with the decision."""
        if request.future.done():
            return
        screen = ApprovalScreen(request)
        request.future.add_done_callback(lambda _: self._app.call_later(self.dismiss, screen))
        decision = await self._app.push_screen_wait(screen)
        if request.future.done():
            return
        if decision is None:
            self._interrupt()
        else:
            request.future.set_result(decision)

    async def question_needed(self, message: QuestionAskedShown) -> None:
        """Show the question in the chat, call attention and ask (in a dialog worker)."""
        await self._chat.add_notice(f"**Question:** {message.request.question}")
        self._attention.call("question")
        self._app.run_worker(self._ask_question(message.request), **_DIALOG_WORKER)

    async def _ask_question(self, request: QuestionAsked) -> None:
        """Show the question dialog and answer the request's future with the reply."""
        if request.future.done():
            return
        screen = QuestionScreen(request)
        request.future.add_done_callback(lambda _: self._app.call_later(self.dismiss, screen))
        answer = await self._app.push_screen_wait(screen)
        if request.future.done():
            return
        if answer is None:
            self._interrupt()
        else:
            request.future.set_result(answer)
            self._app.post_message(QuestionAnswered(answer))

    def dismiss(self, screen: Screen[Any]) -> None:
        """Close a dialog whose request the agent no longer waits for (e.g. interrupted);
        its future is done, so what it is dismissed with is not used."""
        if screen.is_current:
            screen.dismiss(None)

    def dismiss_all(self) -> None:
        """Close every open approval or question dialog (the turn ended)."""
        for screen in list(self._app.screen_stack):
            if isinstance(screen, ApprovalScreen | QuestionScreen):
                self.dismiss(screen)


_DIALOG_WORKER: dict[str, Any] = {"group": "dialogs", "exit_on_error": False}
