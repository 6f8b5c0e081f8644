"""ToolCallSummarizationStrategy: old tool calls, buffered, summarized in parallel, one each.

A group (an assistant message with tool calls, plus their results) enters the buffer once at
least `messages_old_threshold` messages follow it, unless it calls an excluded tool. The run
triggers when the buffer holds `min_tool_calls_to_summarize` groups, or when the oldest
buffered group has `max_tool_call_distance` messages after it. Every buffered group is then
summarized concurrently (at most `max_concurrent_summaries` at once), one progress event per
finished group; the summaries are swapped in by message id in conversation order. Failed
groups stay verbatim; the successes are kept and the first failure is raised afterwards. A
failed group leaves the buffer until `messages_old_threshold` more messages have arrived, so a
failing summarizer costs one attempt per stretch of work, not one before every LLM call.

The check before every LLM call is incremental (`forge.context.tally`): the group index grows
with the conversation and the buffer is found by bisecting the groups' ends, so it costs
O(new messages), not a walk over the history. Each summary gets the latest summary before its
group as the prior summary, for continuity.

A group is one assistant message with its results: parallel calls made in one message form
one group (they cannot be separated validly), count once toward the trigger, are summarized
in one request, and are excluded together when any of them calls an excluded tool.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

from forge.context.adaptive import SummaryLevel, SummaryResult
from forge.context.conversation import Conversation
from forge.context.errors import PartialSummarizationError, SummarizationError
from forge.context.groups import ToolCallGroup, tool_call_groups
from forge.context.ledger import collect_ledger, describe_call
from forge.context.prompts import ContentType
from forge.context.recall import folded_recall_ids, recall_keys_line
from forge.context.strategies.base import (
    StrategyServices,
    SummarizationStrategy,
    prior_summary_before,
)
from forge.context.strategies.contract import StrategyRun
from forge.context.strategies.cooldown import Cooldown
from forge.context.transcript import render_messages
from forge.llm.errors import LLMError
from forge.llm.messages import Message
from forge.llm.protocols import Provider


class ToolCallSummarizationStrategy(SummarizationStrategy):
    """Summarizes old tool-call groups, each in place, concurrently."""

    name = "tool_call"

    def __init__(self, services: StrategyServices) -> None:
        super().__init__(services)
        self.cooldown = Cooldown()
        """Groups whose summary failed recently (keyed by their assistant message's id)."""

    def buffered_groups(self, messages: Sequence[Message]) -> list[ToolCallGroup]:
        """Groups old enough to summarize, oldest first; excluded tools and groups waiting
        after a failed summary left out."""
        settings = self.settings
        excluded = set(settings.excluded_tools)
        length = len(messages)
        return [
            group
            for group in tool_call_groups(messages)
            if group.age(length) >= settings.messages_old_threshold
            and not group.is_excluded(excluded)
            and not self.cooldown.waiting(group.message_ids[0], length)
        ]

    def buffer_state(self, conversation: Conversation) -> tuple[int, ToolCallGroup | None]:
        """How many groups are buffered now, and the oldest of them: the same as
        `buffered_groups`, found incrementally (O(new messages) plus the groups waiting
        after a failure)."""
        settings = self.settings
        length = len(conversation)
        eligible = self.services.tally(conversation).eligible_groups(settings.excluded_tools)
        aged = eligible.aged_count(length - settings.messages_old_threshold)
        if not aged:
            return 0, None
        waiting = {
            position
            for key in self.cooldown.remembered()
            if (position := eligible.position_of.get(key, aged)) < aged
            and self.cooldown.waiting(key, length)
        }
        oldest = next((i for i in range(aged) if i not in waiting), None)
        if oldest is None:
            return 0, None
        return aged - len(waiting), eligible.groups[oldest]

    def enabled(self) -> bool:
        """Switched by `context.tool_call_summaries`."""
        return self.settings.tool_call_summaries

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Enough buffered groups, or the oldest buffered group is far enough back."""
        count, oldest = self.buffer_state(conversation)
        if oldest is None:
            return False
        if count >= self.settings.min_tool_calls_to_summarize:
            return True
        return oldest.age(len(conversation)) >= self.settings.max_tool_call_distance

    def pending_items(
        self, conversation: Conversation, max_tokens: int = 0, *, force: bool = False
    ) -> int:
        """The number of buffered groups."""
        return self.buffer_state(conversation)[0]

    async def summarize_with(
        self, conversation: Conversation, provider: Provider, run: StrategyRun
    ) -> int:
        """Summarize every buffered group; returns how many summaries were applied."""
        messages = conversation.messages
        self.cooldown.forget_missing({message.id for message in messages})
        groups = self.buffered_groups(messages)
        if not groups:
            return 0

        def summarize_group(group: ToolCallGroup) -> Awaitable[SummaryResult]:
            text = render_messages(messages[group.start : group.end])
            return self.services.summarizer.summarize(
                text,
                provider,
                content_type=ContentType.TOOL_OUTPUT,
                prior_summary=prior_summary_before(messages, group.start),
            )

        outcomes = await self.summarize_concurrently(run, groups, summarize_group)
        applied = 0
        errors: list[BaseException] = []
        failed: list[ToolCallGroup] = []
        for group, outcome in zip(groups, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, LLMError | SummarizationError):
                    raise outcome
                errors.append(outcome)
                failed.append(group)
                continue
            if self._apply(conversation, messages[group.start : group.end], outcome, run):
                applied += 1
        for group in failed:
            wait = self.settings.messages_old_threshold
            self.cooldown.failed(group.message_ids[0], len(conversation), wait)
        if errors:
            raise PartialSummarizationError(applied, len(errors), errors[0])
        return applied

    def _apply(
        self,
        conversation: Conversation,
        replaced: Sequence[Message],
        result: SummaryResult,
        run: StrategyRun,
    ) -> bool:
        counter = self.services.counter
        tokens_before = self.tokens_of(replaced)
        ledger = collect_ledger(replaced)
        calls = ", ".join(describe_call(call, limit=120) for call in replaced[0].tool_calls)
        verbatim = True  # the outputs stay word for word: no recall keys needed
        if result.level is SummaryLevel.NONE:
            # Too small to be worth a call: kept word for word, as one message.
            content = f"[Earlier tool call, kept verbatim]\n{result.text}"
        else:
            content = f"[Summary of my earlier tool call: {calls}]\n{result.text}"
            verbatim = False
            keys = recall_keys_line(folded_recall_ids(replaced))
            if counter.count_text(f"{content}\n{keys}") >= tokens_before:
                verbatim = True
                # A summary longer than the original helps nobody; keep the original text.
                content = f"[Earlier tool call, kept verbatim]\n{render_messages(replaced)}"
        message = self.summary_of(
            replaced, result, content, tokens_before=tokens_before, ledger=ledger,
            name_keys=not verbatim,
        )  # fmt: skip
        return self.swap_in(conversation, message, run, result)
