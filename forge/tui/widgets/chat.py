"""The chat: a scrolling column of blocks that renders agent events, bounded in size.

Only the newest `MAX_CHAT_BLOCKS` blocks are kept as widgets, so a long session stays fast;
the conversation itself (and the session file) keeps everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from textual import on
from textual.containers import VerticalScroll
from textual.widget import Widget

from forge.agent.events import (
    HookBlocked,
    HookOutput,
    HookWarning,
    SummarizationCompleted,
    SummarizationFailed,
    ToolCallFinished,
)
from forge.agent.message_meta import without_figures
from forge.llm.messages import Message, ToolCall
from forge.session.tool_names import TASK_TOOL, USER_COMMAND_TOOL
from forge.tui.compaction import CompactionTracker, is_skip, plain_failure
from forge.tui.history import (
    INTERRUPTED_TURN_NOTE,
    LOOP_BREAKING_TOOLS,
    SUMMARY_KINDS,
    HistoryRow,
    history_rows,
    rows_to_fill,
)
from forge.tui.messages import (
    AssistantMessageDoneShown,
    AttachmentsAddedShown,
    ErrorEventShown,
    HookBlockedShown,
    HookOutputShown,
    HookWarningShown,
    MessageDeltaShown,
    ReasoningDeltaShown,
    SteeringAddedShown,
    SubagentEventShown,
    SummarizationCompletedShown,
    SummarizationFailedShown,
    SummarizerDisabledShown,
    ToolCallFinishedShown,
    ToolCallStartedShown,
    ToolOutputDeltaShown,
    TurnEnded,
    TurnFinishedShown,
    TurnOver,
    UserMessageShortenedShown,
)
from forge.tui.widgets.chat_blocks import (
    AssistantBlock,
    ExpansionBlock,
    NoticeBlock,
    SummaryBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from forge.tui.widgets.error_notice import error_notice
from forge.tui.widgets.subagent_rows import SubagentRowsTracker
from forge.tui.widgets.tool_outcomes import recorded_tool_outcome, tool_outcome

MAX_CHAT_BLOCKS = 150
"""Blocks kept mounted at most; older ones are removed from the screen (not from history)."""
MIN_FIRST_ROWS = 8
"""Rows of a resumed conversation mounted at once, at least (a screenful when more)."""
OLDER_ROWS_BATCH = 24
"""Older rows mounted each time the user scrolls up to the top of what is shown."""
OLDER_ROWS_MARGIN = 2
"""Lines from the top at which the next batch of older rows is mounted."""

INTERRUPTED_NOTE = INTERRUPTED_TURN_NOTE
"""Said where a turn the user stopped (Esc, Ctrl+C, Esc in its dialog) ended."""
COMMAND_INTERRUPTED_NOTE = "Interrupted: you stopped your command."
"""Said instead when what was stopped is the user's own `!command`."""

QUIET_STRATEGIES = frozenset({"masking", "ingest_cap", "image_masking"})
"""Deterministic tiers the chat does not show as summary blocks (ADR 0023)."""

_TURN_END_NOTES = {
    "cancelled": INTERRUPTED_NOTE,
    "max_turns": "Stopped: the turn reached its limit of LLM calls.",
    "circuit_breaker": "Stopped: the same failing call kept repeating.",
    "hook_blocked": "Not sent: a hook blocked this message, so it is not in the conversation. "
    "Press ↑ in the prompt to edit it.",
}


class ChatView(VerticalScroll):
    """Renders the conversation as it happens; owns the blocks of the running turn."""

    DEFAULT_CSS = """
    ChatView {
        height: 1fr;
        padding: 0 1;
    }
    """

    def __init__(self, *, show_reasoning: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_reasoning = show_reasoning
        self.current_answer: AssistantBlock | None = None
        self.tool_blocks: dict[str, ToolCallBlock] = {}
        self.subagent_rows = SubagentRowsTracker()
        """What each `task` row's child has done, shown folded under the row."""
        self.shown_summary_ids: set[str] = set()
        self.older_rows: list[HistoryRow] = []
        """A resumed conversation's rows not mounted yet, oldest first (see `show_history`)."""
        self.history_shown: list[HistoryRow] = []
        """The resumed conversation's rows the chat holds (mounted or in `older_rows`)."""
        self._loading_older = False
        self.conversation_source: Callable[[], Sequence[Message]] = lambda: ()
        """The running conversation's messages (set by the app once the session is loaded)."""
        self.summaries_off_source: Callable[[], bool] = lambda: False
        """Whether a permanent error turned LLM summaries off for the session (ADR 0024)."""
        self.compaction: CompactionTracker | None = None
        """The /compact in progress, if any (its chat line is closed when it ends)."""
        self.queued_returned_to_prompt = False
        """The turn was interrupted with messages queued: they went back into the prompt."""

    def watch_virtual_size(self) -> None:
        self._anchor_once_overflowing()
        if self.older_rows and 0 < self.virtual_size.height <= self.size.height:
            self._load_older_soon()  # the history shown does not fill the screen yet

    def on_resize(self) -> None:
        # The chat can start to overflow by shrinking too (a small terminal, the status pane
        # growing), with no change of its content's size.
        self._anchor_once_overflowing()

    def _anchor_once_overflowing(self) -> None:
        # Anchor (stick to the newest output) only once the chat overflows: an anchored
        # widget bottom-aligns short content, and a fresh chat should read from the top. A
        # user who scrolled up keeps the anchor (only released), so this never yanks them.
        if not self.is_anchored and self.virtual_size.height > self.size.height:
            self.anchor()

    def follow_newest(self) -> None:
        """Scroll to the newest output and follow it again: what the user sends must show,
        though a scroll up (or Shift+Tab focusing a block higher up) released the anchor."""
        self.scroll_end(animate=False, immediate=True)  # at the bottom: the anchor holds again

    # --- adding blocks ---------------------------------------------------------------------
    async def add_block(self, block: Widget) -> Widget:
        """Mount `block` at the end (above any queued messages, which wait below the running
        turn's output), then drop the oldest blocks beyond the bound."""
        first_queued = next(
            (c for c in self.children if isinstance(c, UserMessageBlock) and c.queued), None
        )
        if first_queued is not None and not (isinstance(block, UserMessageBlock) and block.queued):
            await self.mount(block, before=first_queued)
        else:
            await self.mount(block)
        excess = len(self.children) - MAX_CHAT_BLOCKS
        if excess > 0:
            old = list(self.children[:excess])
            self.older_rows = []  # mounting them now would leave a gap where `old` was
            for widget in old:
                if isinstance(widget, ToolCallBlock):
                    self.tool_blocks.pop(widget.call.id, None)
            await self.remove_children(old)
        return block

    async def add_user_message(
        self, text: str, *, queued: bool = False, expansion: str = ""
    ) -> UserMessageBlock:
        """Show what the user typed (marked `-queued` while it waits its turn); `expansion`:
        what a `/command` or skill sent in its place, folded below it."""
        block = UserMessageBlock(text, queued=queued)
        await self.add_block(block)
        if expansion:
            block.expansion_block = ExpansionBlock(expansion)
            await self.mount(block.expansion_block, after=block)
        return block

    async def add_notice(self, markdown: str, *, kind: str = "info") -> NoticeBlock:
        """Show a message from Forge: kind "info", "welcome" or "error"."""
        block = NoticeBlock(markdown, kind=kind)
        await self.add_block(block)
        return block

    async def clear_chat(self) -> None:
        """Remove every block (a new session starts)."""
        self.current_answer = None
        self.tool_blocks.clear()
        self.subagent_rows.clear()
        self.shown_summary_ids.clear()
        self.older_rows = []
        self.history_shown = []
        self.anchor(False)
        await self.remove_children()

    # --- the running turn ------------------------------------------------------------------
    async def _answer_block(self) -> AssistantBlock:
        if self.current_answer is None:
            self.current_answer = AssistantBlock(show_reasoning=self.show_reasoning)
            await self.add_block(self.current_answer)
        return self.current_answer

    async def tool_block(self, call: ToolCall) -> ToolCallBlock:
        """The block of `call`, created (after any answer text) on first use."""
        block = self.tool_blocks.get(call.id)
        if block is None:
            await self._finish_answer()
            block = ToolCallBlock(call)
            self.tool_blocks[call.id] = block
            await self.add_block(block)
        return block

    async def _finish_answer(self, final_text: str | None = None) -> None:
        answer = self.current_answer
        self.current_answer = None
        if answer is None:
            return
        await answer.finish(final_text)
        if answer.is_empty:
            await answer.remove()

    # --- the events it shows (posted by `forge.tui.event_dispatch`) --------------------------
    @on(MessageDeltaShown)
    async def _answer_streamed(self, message: MessageDeltaShown) -> None:
        await (await self._answer_block()).append_answer(message.event.text)

    @on(ReasoningDeltaShown)
    async def _reasoning_streamed(self, message: ReasoningDeltaShown) -> None:
        (await self._answer_block()).append_reasoning(message.event.text)

    @on(AssistantMessageDoneShown)
    async def _answer_done(self) -> None:
        await self._finish_answer()

    @on(ToolCallStartedShown)
    async def _tool_started(self, message: ToolCallStartedShown) -> None:
        if message.event.call.name not in LOOP_BREAKING_TOOLS:
            (await self.tool_block(message.event.call)).set_status("running", "running")

    @on(ToolOutputDeltaShown)
    def _tool_output(self, message: ToolOutputDeltaShown) -> None:
        block = self.tool_blocks.get(message.event.call_id)
        if block is not None:
            block.append_output(message.event.text)

    @on(SubagentEventShown)
    async def _subagent_activity(self, message: SubagentEventShown) -> None:
        await self.subagent_rows.show(self.tool_blocks.get(message.event.call_id), message.event)
        inner = message.event.event
        if isinstance(inner, HookBlocked | HookOutput | HookWarning):
            from forge.tui.widgets.hook_notice import HookNoticeBlock

            workspace = getattr(self.app, "workspace", None)
            await self.add_block(
                HookNoticeBlock(inner, agent=message.event.agent, workspace=workspace)
            )

    @on(ToolCallFinishedShown)
    async def _tool_finished(self, message: ToolCallFinishedShown) -> None:
        await self._show_tool_result(message.event)

    @on(ErrorEventShown)
    async def _agent_failed(self, message: ErrorEventShown) -> None:
        if self.compaction is not None:
            # A /compact error is told once, in the line that closes the compaction.
            self.compaction.errors.append(message.event.message)
            return
        await self.add_notice(error_notice(message.event), kind="error")

    @on(SummarizerDisabledShown)
    async def _summaries_turned_off(self, message: SummarizerDisabledShown) -> None:
        await self.add_notice(message.event.text, kind="error")

    @on(TurnFinishedShown)
    async def _agent_stopped(self, message: TurnFinishedShown) -> None:
        await self.end_turn(message.event.reason)

    @on(HookOutputShown)
    @on(HookBlockedShown)
    @on(HookWarningShown)
    async def _hook_notice(
        self, message: HookOutputShown | HookBlockedShown | HookWarningShown
    ) -> None:
        from forge.tui.widgets.hook_notice import HookNoticeBlock

        workspace = getattr(self.app, "workspace", None)
        await self.add_block(HookNoticeBlock(message.event, workspace=workspace))

    @on(SteeringAddedShown)
    async def _steering_shown(self, message: SteeringAddedShown) -> None:
        """A message steered into the turn: shown where the turn added it, as the user's."""
        await self.add_user_message(message.event.text)

    @on(UserMessageShortenedShown)
    async def _user_message_cut(self, message: UserMessageShortenedShown) -> None:
        """Say that the model got the message's head and tail, and how it reads the rest."""
        await self.add_notice(message.event.text, kind="error")

    @on(AttachmentsAddedShown)
    async def _attachments_shown(self, message: AttachmentsAddedShown) -> None:
        """One row per attached file, one error row per mention not attached."""
        for line in message.event.attached:
            await self.add_notice(line, kind="attachment")
        for problem in message.event.problems:
            await self.add_notice(f"{problem}; the message was sent without it.", kind="error")

    @on(SummarizationCompletedShown)
    async def _summarization_succeeded(self, message: SummarizationCompletedShown) -> None:
        event = message.event
        if self.compaction is not None:
            self.compaction.runs.append(event)
        if event.strategy in QUIET_STRATEGIES:
            # Masking runs every few tool calls: the status pane shows it, the chat stays calm.
            self.remember_summaries(self.conversation_source())
            if event.strategy == "ingest_cap" and event.items:
                cut = max(0, event.tokens_before - event.tokens_after)
                await self.add_notice(
                    f"A long tool output was cut to its head and tail to fit the context "
                    f"(saved {cut:,} tokens); the model can read the rest by line range.",
                    kind="info",
                )
            return
        await self._show_run_summaries(event)

    @on(SummarizationFailedShown)
    async def _summarization_fell_short(self, message: SummarizationFailedShown) -> None:
        event = message.event
        if self.compaction is not None:
            self.compaction.runs.append(event)  # a /compact tells it in its closing line
        elif not is_skip(event) and not self.summaries_off_source():
            # When summaries are off, their one "Summaries are off" notice tells it.
            await self.add_notice(plain_failure(event), kind="error")
        await self._show_run_summaries(event)

    async def _show_run_summaries(
        self, event: SummarizationCompleted | SummarizationFailed
    ) -> None:
        saved = event.tokens_before - event.tokens_after if event.tokens_before else None
        # A /compact's run says so: the status pane shows its trigger as "(manual)".
        label = f"Summarized by /compact ({event.strategy})" if self.compaction else None
        await self.show_new_summaries(
            self.conversation_source(), strategy=event.strategy, tokens_saved=saved, label=label
        )

    @on(TurnOver)
    async def _turn_over(self, message: TurnOver) -> None:
        """Close the turn or /compact in the chat, then tell the app (`TurnEnded`): it comes
        after everything the chat was sent before, so the next queued turn starts after."""
        try:
            await self._close_turn(message)
        finally:
            self.app.post_message(TurnEnded(message.reason, message.error))

    async def _close_turn(self, message: TurnOver) -> None:
        if self.app.return_code is not None:
            return  # exiting (a signal, Ctrl+C twice): the chat is being taken down
        compaction, self.compaction = self.compaction, None
        queued, self.queued_returned_to_prompt = self.queued_returned_to_prompt, False
        if compaction is None:
            if message.reason == "cancelled":
                await self.show_calls_not_run(self.conversation_source())
            await self.end_turn(message.reason, message.error, queued=queued)
            return
        await self.end_turn("completed")  # the compaction line tells how it ended
        await compaction.close(message.reason, message.error)
        # The outcome line goes after the summary block the run added, not above it.
        if self.children and compaction.notice is not self.children[-1]:
            self.move_child(compaction.notice, after=self.children[-1])

    async def _show_tool_result(self, event: ToolCallFinished) -> None:
        if event.call.name in LOOP_BREAKING_TOOLS and not event.is_error:
            if event.call.name != "ask_question":  # the question dialog shows that one
                await self.add_final_answer(event.result)
            return
        block = await self.tool_block(event.call)
        # A child's report without the line of figures for the model (docs/adr/0048).
        task = event.call.name == TASK_TOOL
        block.show_output(without_figures(event.result) if task else event.result)
        diff = event.metadata.get("diff")
        stats = None
        if isinstance(diff, str) and diff.strip():
            # Imported here: the tools package is not needed for the first frame.
            from forge.session.shown_calls import diff_stats

            stats = diff_stats(diff)
        block.set_status(
            *tool_outcome(
                event.result,
                is_error=event.is_error,
                exit_code=event.exit_code,
                rejected=bool(event.metadata.get("rejected")),
                refused=bool(event.metadata.get("refused")),
                by_hook=bool(event.metadata.get("hook")),
                diff_stats=stats,
            )
        )
        if stats is not None and isinstance(diff, str):
            await block.show_diff(diff)

    async def add_final_answer(self, markdown: str) -> AssistantBlock:
        """Show what `converse` or `task_completion` told the user, as an answer."""
        await self._finish_answer()
        block = AssistantBlock(show_reasoning=self.show_reasoning)
        await self.add_block(block)
        await block.finish(markdown)
        return block

    async def mark_awaiting_approval(self, call: ToolCall) -> None:
        """The call waits for the user's approval."""
        (await self.tool_block(call)).set_status("pending", "awaiting approval")

    async def show_calls_not_run(self, messages: Sequence[Message]) -> None:
        """The calls the interrupted turn ending `messages` never ran (one waiting for
        approval, those after it): shown cancelled with their recorded result, as a resumed
        session shows them (no event told the chat about them)."""
        # Imported here: the agent package is not needed for the first frame.
        from forge.session.shown_calls import calls_not_run

        for call, result in calls_not_run(messages):
            if call.name in LOOP_BREAKING_TOOLS:
                continue
            block = await self.tool_block(call)
            block.show_output(result.content)
            block.set_status(*recorded_tool_outcome(result))
        # A child stopped with the turn reported what it had found (no event said so).
        running = {
            call_id: block
            for call_id, block in self.tool_blocks.items()
            if block.call.name == TASK_TOOL and block.status == "running"
        }
        for message in messages[::-1] if running else ():
            if message.role == "tool" and message.tool_call_id in running:
                running.pop(message.tool_call_id).show_output(without_figures(message.content))
            elif message.role == "user":
                break

    async def end_turn(self, reason: str, error: str = "", *, queued: bool = False) -> None:
        """The turn ended: flush the answer, settle any call still marked running or pending.

        `queued` says messages were waiting; an interrupt puts them back in the prompt, and
        the note says so.
        """
        await self._finish_answer()
        user_command = any(b.call.name == USER_COMMAND_TOOL for b in self.tool_blocks.values())
        for block in self.tool_blocks.values():
            if block.status in ("running", "pending"):
                block.set_status("error", "interrupted" if reason == "cancelled" else "unfinished")
        self.tool_blocks.clear()
        self.subagent_rows.clear()
        if reason == "hook_blocked":  # UserPromptSubmit kept the message from the model
            sent = [block for block in self.query(UserMessageBlock) if not block.queued]
            if sent:
                sent[-1].set_not_sent()
        if error:
            await self.add_notice(f"**Turn failed**: {error}", kind="error")
        elif note := _TURN_END_NOTES.get(reason):
            if reason == "cancelled" and user_command:
                note = COMMAND_INTERRUPTED_NOTE
            if reason == "cancelled" and queued:
                note += " Your queued message is back in the prompt, not sent."
            await self.add_notice(note, kind="error" if reason != "cancelled" else "info")

    # --- summaries and history ---------------------------------------------------------------
    async def show_new_summaries(
        self,
        messages: Iterable[Message],
        *,
        strategy: str,
        tokens_saved: int | None,
        label: str | None = None,
    ) -> SummaryBlock | None:
        """One block for the summaries in `messages` not shown yet (one summarization run),
        titled `label` (default "Summarized (strategy)")."""
        new = [
            m for m in messages if m.kind in SUMMARY_KINDS and m.id not in self.shown_summary_ids
        ]
        if not new:
            return None
        self.shown_summary_ids.update(m.id for m in new)
        text = "\n\n---\n\n".join(m.content for m in new)
        replaced = sum(len(m.replaces) for m in new)
        block = SummaryBlock(
            text,
            label=label or f"Summarized ({strategy})",
            replaced=replaced,
            tokens_saved=tokens_saved,
        )
        await self.add_block(block)
        return block

    def remember_summaries(self, messages: Iterable[Message]) -> None:
        """Mark the summaries already in `messages` as shown (e.g. when history is rendered)."""
        self.shown_summary_ids.update(m.id for m in messages if m.kind in SUMMARY_KINDS)

    # --- a resumed conversation (docs/adr/0032) -----------------------------------------------
    async def show_history(self, messages: Sequence[Message]) -> None:
        """Render a resumed conversation as the live chat showed it: its newest rows (within
        the block bound) mounted in one batch at the bottom, so the last answer is on screen
        at once; older rows wait in `older_rows` and mount as the user scrolls up to them."""
        self.remember_summaries(messages)
        await self.show_rows(history_rows(messages))

    async def show_rows(self, rows: Sequence[HistoryRow]) -> None:
        """Show a resumed conversation's `rows` (see `show_history`); rows already on screen
        (read ahead of the session, `forge.tui.history_preview`) stay as they are."""
        rows = list(rows[-MAX_CHAT_BLOCKS:])
        shown = self.history_shown
        if shown and len(shown) <= len(rows) and rows[len(rows) - len(shown) :] == shown:
            # The newest rows are on screen (read ahead): the rest waits for a scroll up.
            self.older_rows = rows[: len(rows) - len(shown)] + self.older_rows
            self.history_shown = rows
            return
        if shown:
            await self.clear_chat()
        self.tool_blocks.clear()
        self.history_shown = rows
        # A screenful (the chat is not laid out yet: the screen's size bounds it), at least a few.
        screen = self.app.size
        count = max(MIN_FIRST_ROWS, rows_to_fill(rows, screen.height, screen.width))
        first = rows[-count:]
        self.older_rows = rows[: len(rows) - len(first)]
        await self._mount_rows(first)
        self.scroll_end(animate=False, immediate=True)

    async def _mount_rows(self, rows: Sequence[HistoryRow], *, at_top: bool = False) -> None:
        from forge.tui.widgets.history_blocks import block_for

        blocks = [block_for(row, show_reasoning=self.show_reasoning) for row in rows]
        if not blocks:
            return
        if at_top and self.children:
            await self.mount_all(blocks, before=self.children[0])
        else:
            await self.mount_all(blocks)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= OLDER_ROWS_MARGIN and self.older_rows:
            self._load_older_soon()

    def _load_older_soon(self) -> None:
        if not self._loading_older:
            self._loading_older = True
            self.call_later(self.load_older_rows)

    async def load_older_rows(self) -> int:
        """Mount the next batch of older history above the chat's first block, keeping what
        the user is looking at in place; returns how many rows were mounted."""
        try:
            batch = self.older_rows[-OLDER_ROWS_BATCH:]
            self.older_rows = self.older_rows[: len(self.older_rows) - len(batch)]
            height_before = self.virtual_size.height
            scrolled_up = self.scroll_y < self.max_scroll_y  # not following the newest output
            await self._mount_rows(batch, at_top=True)
            if batch and scrolled_up:
                # The user scrolled up to the top: what they read stays where it was.
                def keep_place() -> None:
                    grown = self.virtual_size.height - height_before
                    self.scroll_to(
                        y=self.scroll_y + grown,
                        animate=False,
                        immediate=True,
                        release_anchor=False,
                    )

                self.call_after_refresh(keep_place)
            return len(batch)
        finally:
            self._loading_older = False
