"""The app's agent turns: what a prompt submission starts, the turn worker, the queue of
messages typed meanwhile, interrupting, and the end of a turn (docs/adr/0016).

One async worker per turn (group "agent-turn") iterates the agent's events and hands each to
the `EventDispatcher`, which posts it as a typed message to the widgets that show it; the
worker never touches a widget. It always ends by posting `TurnOver` to the chat and the
summarization panel; the chat, having closed the turn, posts `TurnEnded` to the app, which
hands it to `Turns.turn_ended`. A `!command` and `/compact` run in the same worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from textual.app import App

from forge.tui.attention import Attention
from forge.tui.compaction import CompactionTracker
from forge.tui.config_problem import not_sent_text
from forge.tui.delta_batching import batch_deltas
from forge.tui.dialog_flows import Dialogs
from forge.tui.event_dispatch import EventDispatcher
from forge.tui.input_flows import turn_events, user_command_events
from forge.tui.messages import ContextWarningShown, TurnEnded, TurnOver, TurnStarted
from forge.tui.retry_notices import RetryScheduledShown
from forge.tui.steering import requeue_unsent
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import NoticeBlock, UserMessageBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.prompt_input import PromptInput
from forge.tui.widgets.status import StatusPane
from forge.tui.widgets.welcome import needs_api_key

if TYPE_CHECKING:
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.session.events import SessionEvent
    from forge.tui.commands import SlashCommandRunner


class Turns:
    """Owns the turn state: whether a turn runs (`busy`), the messages queued behind it, this
    turn's retry line and context warning."""

    def __init__(
        self,
        app: App[Any],
        *,
        chat: ChatView,
        status: StatusPane,
        dispatcher: EventDispatcher,
        commands: SlashCommandRunner,
        dialogs: Dialogs,
        attention: Attention,
        session: Callable[[], Session],
        settings: Callable[[], Settings],
        config_store: Callable[[], ConfigStore],
        refresh_gauge: Callable[[], None],
    ) -> None:
        self._app = app
        self._chat = chat
        self._status = status
        self._dispatcher = dispatcher
        self._commands = commands
        self._dialogs = dialogs
        self._attention = attention
        self._session = session
        self._settings = settings
        self._config_store = config_store
        self._refresh_gauge = refresh_gauge
        self._busy = False
        self.queued: list[tuple[str, UserMessageBlock]] = []
        """Messages typed while a turn runs, sent in order after it (Esc returns them)."""
        self._retry_notice: NoticeBlock | None = None
        """This turn's "retrying in…" line in the chat, updated in place."""
        self._warned_this_turn = False

    @property
    def busy(self) -> bool:
        """A turn or a /compact run is in progress (the app wears `-busy`; Esc shows)."""
        return self._busy

    @busy.setter
    def busy(self, value: bool) -> None:
        self._busy = value
        self._app.set_class(value, "-busy")
        self._app.refresh_bindings()

    @property
    def _prompt(self) -> PromptInput:
        return self._app.query_one(PromptInput)

    # --- input -----------------------------------------------------------------------------
    async def handle_input(self, text: str) -> None:
        """A prompt submission: `!command`, `/command`, or a message for the model."""
        self._chat.follow_newest()
        if text.startswith("!"):  # the user's own shell command (ADR 0030)
            await self._run_user_command(text)
            return
        if await self._commands.run_text(text):
            return
        if text.lstrip().startswith("//"):
            text = text.lstrip()[1:]
        await self.send_user_message(text)

    async def _run_user_command(self, text: str) -> None:
        """Run the "!command" `text` in the workspace in the turn worker."""
        found = await user_command_events(
            text, self._chat, self._prompt, self._session(), busy=self.busy
        )
        if found is None:
            return
        command, events = found
        self.busy = True
        self._status.show_activity(f"running !{command[:40]}…")
        self.run_events(events)

    async def send_user_message(self, text: str, model: str = "", typed: str = "") -> None:
        """Show `text` as the user's message and run a turn for it (queued while one runs);
        with `model`, that one turn runs on it (a custom command's front matter); `typed`:
        what the user typed when `text` is a command's expansion (shown, the expansion
        folded under it)."""
        shown, expansion = (typed, text) if typed and typed != text else (text, "")
        chat = self._chat
        if needs_api_key(self._settings()):
            await chat.add_user_message(shown, expansion=expansion)
            banner = self._app.query_one(ConfigProblemBanner)
            current = self._config_store().current
            await chat.add_notice(not_sent_text(current, banner), kind="error")
            return
        if self.busy:
            block = await chat.add_user_message(shown, queued=True, expansion=expansion)
            self.queued.append((text, block))
            self.show_activity()
            return
        await chat.add_user_message(shown, expansion=expansion)
        self.start_turn(text, model, typed=shown if expansion else "")

    # --- the turn worker ---------------------------------------------------------------------
    def start_turn(self, text: str, model: str = "", *, typed: str = "") -> None:
        """Run one agent turn for `text` in the turn worker (on `model` when given); its `@`
        mentions attach files (ADR 0030), shown by the chat; `typed`: what the user typed
        when `text` is a command's expansion (the session file keeps both)."""
        self.busy = True
        self._warned_this_turn = False
        self.show_activity()
        self._status.summarization.post_message(TurnStarted())
        self.run_events(turn_events(self._session(), text, model, typed))

    def start_compaction(self, instructions: str, notice: NoticeBlock) -> None:
        """Run `/compact` in the turn worker (its events render like a turn's); `notice` is
        the chat line that announced it, closed with the outcome when the run ends."""
        self.busy = True
        self._chat.compaction = CompactionTracker(notice, instructions)
        self.show_activity("compacting…")
        self.run_events(self._session().compact(instructions))

    def run_events(self, events: AsyncIterator[SessionEvent]) -> None:
        """Hand `events` to the dispatcher in the turn worker (one at a time: a new one
        replaces the running one)."""
        self._app.run_worker(
            self._dispatch_all(events),
            name="run_events",
            group="agent-turn",
            exclusive=True,
            exit_on_error=False,
        )

    async def _dispatch_all(self, events: AsyncIterator[SessionEvent]) -> None:
        """Hand each of the agent's events to the dispatcher; never touches a widget.

        Always ends by posting `TurnOver`, whether the events ran out, the worker was
        cancelled (interrupt) or the agent raised.
        """
        reason, error = "completed", ""
        unsent: list[SessionEvent] = []
        dispatch = self._dispatcher.dispatch
        try:
            # Streamed text goes out in ~30 ms batches, not one message per token.
            async with (
                aclosing(events),  # type: ignore[type-var]
                aclosing(batch_deltas(events, unsent=unsent)) as batched,
            ):
                async for event in batched:
                    if self._app.return_code is None:  # exiting: nothing more is shown
                        dispatch(event)
        except asyncio.CancelledError:
            reason = "cancelled"
            for event in unsent:  # the text the interrupted answer keeps, shown as kept
                dispatch(event)
            raise
        except Exception as exception:
            reason, error = "error", str(exception) or type(exception).__name__
        finally:
            self._status.summarization.post_message(TurnOver(reason, error))
            self._status.subagents.post_message(TurnOver(reason, error))
            self._chat.post_message(TurnOver(reason, error))

    def interrupt(self) -> None:
        """Stop the running turn; queued messages go back into the prompt, not lost."""
        if not self.busy:
            return
        self._app.workers.cancel_group(self._app, "agent-turn")
        if self.queued:
            self._chat.queued_returned_to_prompt = True  # the chat's closing note says so
            texts = [block.text for _, block in self.queued]  # as typed (`/greet Alice`)
            for _, block in self.queued:
                block.remove()
                if block.expansion_block is not None:
                    block.expansion_block.remove()
            self.queued.clear()
            prompt = self._prompt
            prompt.load_text("\n\n".join(texts))
            prompt.move_cursor(prompt.document.end)

    # --- while it runs, and its end ------------------------------------------------------------
    async def retry_notice(self, message: RetryScheduledShown) -> None:
        """The provider retries: one line per turn in the chat, updated in place."""
        text = f"{message.who()}: {message.describe()}…"
        if self.busy:
            self.show_activity(f"{message.describe()}…")
        if self._retry_notice is None:
            self._retry_notice = await self._chat.add_notice(text)
        else:
            await self._retry_notice.set_text(text)
        self._dispatcher.retry_shown = True

    def request_resumed(self) -> None:
        """The retry went through: back to "working…"."""
        if self.busy and self._chat.compaction is None:
            self.show_activity()

    def context_warned(self, message: ContextWarningShown) -> None:
        """A toast once per turn: usage can cross the line before every call of a long
        turn, and the gauge already shows it in colour."""
        if self._warned_this_turn:
            return
        self._warned_this_turn = True
        event = message.event
        self._app.notify(
            f"Context at {event.current_tokens / max(event.max_tokens, 1):.0%} of the budget",
            severity="warning",
        )

    async def turn_ended(self, message: TurnEnded) -> None:
        """The chat closed the turn: dialogs close, the gauge refreshes, attention is
        called, and the next queued message starts."""
        if self._app.return_code is not None:
            return  # exiting (a signal, Ctrl+C twice): the chat is being taken down
        self._retry_notice = None
        self._dispatcher.turn_over()
        self._dialogs.dismiss_all()
        self._refresh_gauge()
        self.busy = False
        # Steered messages the turn ended without adding (docs/adr/0057): not lost.
        await requeue_unsent(self._app, cancelled=message.reason == "cancelled")  # type: ignore[arg-type]
        if message.reason != "cancelled":  # after Esc the user is here
            self._attention.call("turn_end", message.reason)
        if self.queued and message.reason != "cancelled":
            text, block = self.queued.pop(0)
            block.set_queued(False)
            self.start_turn(text, typed=block.text if block.text != text else "")
        self.show_activity()

    def show_activity(self, working: str = "working…") -> None:
        """The status pane's activity line: working (or what), and how many are queued."""
        parts = [working] if self.busy else []
        if self.queued:
            parts.append(f"{len(self.queued)} queued")
        self._status.show_activity(" · ".join(parts))
