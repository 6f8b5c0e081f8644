"""The app's agent turns: what a prompt submission starts, the turn worker, and the end of a
turn (docs/adr/0016).

One async worker per turn (group "agent-turn") iterates the agent's events and hands each to
the `EventDispatcher`, which posts it as a typed message to the widgets that show it; the
worker never touches a widget. It always ends by posting `TurnOver` to the chat and the
summarization panel; the chat, having closed the turn, posts `TurnEnded` to the app
(`on_turn_ended` here). A `!command` and `/compact` run in the same worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App

from forge.tui.compaction import CompactionTracker
from forge.tui.config_problem import not_sent_text
from forge.tui.delta_batching import batch_deltas
from forge.tui.input_flows import turn_events, user_command_events
from forge.tui.messages import (
    CompactionRequested,
    ContextWarned,
    RequestResumed,
    TurnEnded,
    TurnOver,
    TurnStarted,
    UserMessageRequested,
)
from forge.tui.retry_notices import RetryNotice
from forge.tui.steering import requeue_unsent
from forge.tui.widgets.chat_blocks import NoticeBlock, UserMessageBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.prompt_input import PromptInput
from forge.tui.widgets.welcome import needs_api_key

if TYPE_CHECKING:
    from forge.agent.events import AgentEvent
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.attention import AttentionReason
    from forge.session.core import Session
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.event_dispatch import EventDispatcher
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.status import StatusPane


class TurnFlows(App[int]):
    """Mixed into `ForgeApp`: input handling, the turn worker and the end of a turn."""

    busy: bool
    chat: ChatView
    status: StatusPane
    session: Session
    settings: Settings
    config_store: ConfigStore
    commands_runner: SlashCommandRunner
    dispatcher: EventDispatcher
    queued: list[tuple[str, UserMessageBlock]]
    _retry_notice: NoticeBlock | None
    _warned_this_turn: bool

    if TYPE_CHECKING:

        def _dismiss_dialogs(self) -> None: ...  # DialogFlows'

        def refresh_context_gauge(self) -> None: ...  # ForgeApp's

        def call_attention(self, reason: AttentionReason, detail: str = "") -> None: ...

    async def _handle_input(self, text: str) -> None:
        self.chat.follow_newest()
        if text.startswith("!"):  # the user's own shell command (ADR 0030)
            await self._run_user_command(text)
            return
        if await self.commands_runner.run_text(text):
            return
        if text.lstrip().startswith("//"):
            text = text.lstrip()[1:]
        await self.send_user_message(text)

    async def _run_user_command(self, text: str) -> None:
        """Run the "!command" `text` in the workspace in the turn worker."""
        prompt = self.query_one(PromptInput)
        found = await user_command_events(text, self.chat, prompt, self.session, busy=self.busy)
        if found is None:
            return
        command, events = found
        self.busy = True
        self.status.show_activity(f"running !{command[:40]}…")
        self.run_events(events)

    async def send_user_message(self, text: str, model: str = "", typed: str = "") -> None:
        """Show `text` as the user's message and run a turn for it (queued while one runs);
        with `model`, that one turn runs on it (a custom command's front matter); `typed`:
        what the user typed when `text` is a command's expansion (shown, the expansion
        folded under it)."""
        shown, expansion = (typed, text) if typed and typed != text else (text, "")
        if needs_api_key(self.settings):
            await self.chat.add_user_message(shown, expansion=expansion)
            banner = self.query_one(ConfigProblemBanner)
            await self.chat.add_notice(
                not_sent_text(self.config_store.current, banner), kind="error"
            )
            return
        if self.busy:
            block = await self.chat.add_user_message(shown, queued=True, expansion=expansion)
            self.queued.append((text, block))
            self._show_activity()
            return
        await self.chat.add_user_message(shown, expansion=expansion)
        self.start_turn(text, model, typed=shown if expansion else "")

    def start_turn(self, text: str, model: str = "", *, typed: str = "") -> None:
        """Run one agent turn for `text` in the turn worker (on `model` when given); its `@`
        mentions attach files (ADR 0030), shown by the chat; `typed`: what the user typed
        when `text` is a command's expansion (the session file keeps both)."""
        self.busy = True
        self._warned_this_turn = False
        self._show_activity()
        self.status.summarization.post_message(TurnStarted())
        self.run_events(turn_events(self.chat, self.session, text, model, typed))

    def start_compaction(self, instructions: str, notice: NoticeBlock) -> None:
        """Run `/compact` in the turn worker (its events render like a turn's); `notice` is
        the chat line that announced it, closed with the outcome when the run ends."""
        self.busy = True
        self.chat.compaction = CompactionTracker(notice, instructions)
        self._show_activity("compacting…")
        self.run_events(self.session.compact(instructions))

    @on(CompactionRequested)
    def _compaction_requested(self, message: CompactionRequested) -> None:
        self.start_compaction(message.instructions, message.notice)

    @on(UserMessageRequested)
    async def _user_message_requested(self, message: UserMessageRequested) -> None:
        await self.send_user_message(message.text, message.model, message.typed)

    @work(exclusive=True, group="agent-turn", exit_on_error=False)
    async def run_events(self, events: AsyncIterator[AgentEvent]) -> None:
        """Hand each of the agent's events to the dispatcher; never touches a widget.

        Always ends by posting `TurnOver`, whether the events ran out, the worker was
        cancelled (interrupt) or the agent raised.
        """
        reason, error = "completed", ""
        unsent: list[AgentEvent] = []
        dispatch = self.dispatcher.dispatch
        try:
            # Streamed text goes out in ~30 ms batches, not one message per token.
            async with (
                aclosing(events),  # type: ignore[type-var]
                aclosing(batch_deltas(events, unsent=unsent)) as batched,
            ):
                async for event in batched:
                    if self.return_code is None:  # exiting: nothing more is shown
                        dispatch(event)
        except asyncio.CancelledError:
            reason = "cancelled"
            for event in unsent:  # the text the interrupted answer keeps, shown as kept
                dispatch(event)
            raise
        except Exception as exception:
            reason, error = "error", str(exception) or type(exception).__name__
        finally:
            self.status.summarization.post_message(TurnOver(reason, error))
            self.status.subagents.post_message(TurnOver(reason, error))
            self.chat.post_message(TurnOver(reason, error))

    async def on_retry_notice(self, message: RetryNotice) -> None:
        text = f"{message.who()}: {message.describe()}…"
        if self.busy:
            self._show_activity(f"{message.describe()}…")
        if self._retry_notice is None:
            self._retry_notice = await self.chat.add_notice(text)
        else:
            await self._retry_notice.set_text(text)
        self.dispatcher.retry_shown = True

    @on(RequestResumed)
    def _request_resumed(self) -> None:
        if self.busy and self.chat.compaction is None:
            self._show_activity()  # the retry went through: back to "working…"

    @on(ContextWarned)
    def _context_warned(self, message: ContextWarned) -> None:
        # Once per turn: usage can cross the line before every call of a long turn, and the
        # gauge already shows it in colour.
        if self._warned_this_turn:
            return
        self._warned_this_turn = True
        event = message.event
        self.notify(
            f"Context at {event.current_tokens / max(event.max_tokens, 1):.0%} of the budget",
            severity="warning",
        )

    async def on_turn_ended(self, message: TurnEnded) -> None:
        if self.return_code is not None:
            return  # exiting (a signal, Ctrl+C twice): the chat is being taken down
        self._retry_notice = None
        self.dispatcher.turn_over()
        self._dismiss_dialogs()
        self.refresh_context_gauge()
        self.busy = False
        # Steered messages the turn ended without adding (docs/adr/0057): not lost.
        await requeue_unsent(self, cancelled=message.reason == "cancelled")  # type: ignore[arg-type]
        if message.reason != "cancelled":  # after Esc the user is here
            self.call_attention("turn_end", message.reason)
        if self.queued and message.reason != "cancelled":
            text, block = self.queued.pop(0)
            block.set_queued(False)
            self.start_turn(text, typed=block.text if block.text != text else "")
        self._show_activity()

    def _show_activity(self, working: str = "working…") -> None:
        parts = [working] if self.busy else []
        if self.queued:
            parts.append(f"{len(self.queued)} queued")
        self.status.show_activity(" · ".join(parts))
