"""The approval and question dialogs of a running turn (the app's part of them): show the
dialog in a worker, answer the request's future, and close a dialog the agent no longer waits
for (an interrupted turn).

A dialog dismissed with None (Esc) ends the turn the way Esc does while the agent works: the
turn worker is cancelled, so the agent records the waiting call and the calls after it as
cancelled and sends no further request (docs/adr/0031)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.screen import Screen

from forge.agent.events import ApprovalRequested, QuestionAsked
from forge.session.attention import AttentionReason
from forge.tui.messages import ApprovalRequestedShown, QuestionAnswered, QuestionAskedShown
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.widgets.chat import ChatView


class DialogFlows(App[int]):
    """Mixed into `ForgeApp`: the handlers that put a turn's requests to the user."""

    chat: ChatView

    if TYPE_CHECKING:

        def action_interrupt(self) -> None: ...  # KeyActions': stop the running turn (Esc)

        def call_attention(self, reason: AttentionReason, detail: str = "") -> None: ...

    async def on_approval_requested_shown(self, message: ApprovalRequestedShown) -> None:
        if not message.request.agent:  # a subagent's call has no row of its own
            await self.chat.mark_awaiting_approval(message.request.call)
        self.call_attention("approval", message.request.call.name)
        self.ask_approval(message.request)

    @work(group="dialogs", exit_on_error=False)
    async def ask_approval(self, request: ApprovalRequested) -> None:
        """Show the approval dialog and answer the request's future with the decision."""
        if request.future.done():
            return
        screen = ApprovalScreen(request)
        request.future.add_done_callback(lambda _: self.call_later(self._dismiss_dialog, screen))
        decision = await self.push_screen_wait(screen)
        if request.future.done():
            return
        if decision is None:
            self.action_interrupt()
        else:
            request.future.set_result(decision)

    async def on_question_asked_shown(self, message: QuestionAskedShown) -> None:
        await self.chat.add_notice(f"**Question:** {message.request.question}")
        self.call_attention("question")
        self.ask_question(message.request)

    @work(group="dialogs", exit_on_error=False)
    async def ask_question(self, request: QuestionAsked) -> None:
        """Show the question dialog and answer the request's future with the reply."""
        if request.future.done():
            return
        screen = QuestionScreen(request)
        request.future.add_done_callback(lambda _: self.call_later(self._dismiss_dialog, screen))
        answer = await self.push_screen_wait(screen)
        if request.future.done():
            return
        if answer is None:
            self.action_interrupt()
        else:
            request.future.set_result(answer)
            self.post_message(QuestionAnswered(answer))

    async def on_question_answered(self, message: QuestionAnswered) -> None:
        await self.chat.add_user_message(message.answer)

    def _dismiss_dialog(self, screen: Screen[Any]) -> None:
        """Close a dialog whose request the agent no longer waits for (e.g. interrupted);
        its future is done, so what it is dismissed with is not used."""
        if screen.is_current:
            screen.dismiss(None)

    def _dismiss_dialogs(self) -> None:
        for screen in list(self.screen_stack):
            if isinstance(screen, ApprovalScreen | QuestionScreen):
                self._dismiss_dialog(screen)
