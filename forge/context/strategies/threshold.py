"""ThresholdSummarizationStrategy: near the budget, the older part becomes one summary.

Triggers at `threshold_trigger` of the budget with at least `MINIMUM_MESSAGES` non-system
messages. The recent tail (the newest whole units worth up to `RECENT_SHARE` of the prompt, at
least one unit) stays verbatim. The older part, after the head (system prompt and pending
task), is cut at every protected message (the latest user message, excluded tools' groups) into
stretches; each stretch of two or more messages (or one large message) becomes one summary
message in its place.
A stretch larger than the summarizer's window first has its tool outputs replaced by
placeholders (the fallback's first step), then goes to the adaptive summarizer (map-reduce if
still too large). A summary that would not be smaller than its stretch is not applied; a run
that applies nothing raises `SummarizationSkipped`, so the manager reports it and no loop forms.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from forge.context.adaptive import BRIEF_UP_TO_TOKENS, SummaryResult
from forge.context.budget import reached
from forge.context.conversation import Conversation
from forge.context.errors import (
    PartialSummarizationError,
    SummarizationError,
    SummarizationSkipped,
)
from forge.context.fallback import prune_tool_outputs
from forge.context.groups import head_end, protected_positions, units
from forge.context.ledger import collect_ledger
from forge.context.prompts import ContentType
from forge.context.strategies.base import (
    SummarizationStrategy,
)
from forge.context.strategies.contract import Capabilities, StrategyRun
from forge.context.transcript import render_messages
from forge.llm.errors import LLMError
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import Provider

MINIMUM_MESSAGES = 4
"""Non-system messages needed before a threshold summary is worth it."""
RECENT_SHARE = 0.25
"""Share of the prompt's tokens the verbatim recent tail may hold."""


class ThresholdSummarizationStrategy(SummarizationStrategy):
    """Summarizes the older part of the conversation into one summary per stretch."""

    name = "threshold"
    capabilities = Capabilities(uses_llm=True, compacts=True, token_triggered=True)

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """At/above `threshold_trigger` of the budget with enough messages."""
        non_system = self.services.tally(conversation).non_system  # O(new messages)
        return non_system >= MINIMUM_MESSAGES and reached(
            current_tokens, max_tokens, self.settings.threshold_trigger
        )

    def stretches(self, messages: Sequence[Message]) -> list[tuple[int, int]]:
        """The [start, end) stretches a run would summarize now, oldest first."""
        counter = self.services.counter
        all_units = units(messages)
        budget = RECENT_SHARE * counter.count_messages(messages)
        tail, kept = len(messages), 0
        for unit_start, unit_end in reversed(all_units):
            tokens = sum(counter.count_message(m) for m in messages[unit_start:unit_end])
            if tail != len(messages) and kept + tokens > budget:
                break
            tail, kept = unit_start, kept + tokens
        protected = protected_positions(messages, set(self.settings.excluded_tools))
        first = head_end(messages)
        stretches: list[tuple[int, int]] = []
        current: tuple[int, int] | None = None
        for unit_start, unit_end in all_units:
            if unit_start < first or unit_end > tail:
                continue
            if any(position in protected for position in range(unit_start, unit_end)):
                current = None
                continue
            if current is not None and current[1] == unit_start:
                current = (current[0], unit_end)
                stretches[-1] = current
            else:
                current = (unit_start, unit_end)
                stretches.append(current)
        return [
            (start, end)
            for start, end in stretches
            if end - start >= 2 or _large_single(messages[start], counter.count_message)
        ]

    def pending_items(
        self, conversation: Conversation, max_tokens: int = 0, *, force: bool = False
    ) -> int:
        """Stretches a run now would summarize: the unit its progress events count in."""
        return len(self.stretches(conversation.messages))

    async def summarize_with(
        self, conversation: Conversation, provider: Provider, run: StrategyRun
    ) -> int:
        """Summarize each stretch; returns how many stretches were summarized (the unit of
        `pending_items` and the progress events)."""
        self._fit_summarizer_window(conversation)
        messages = conversation.messages
        stretches = self.stretches(messages)
        if not stretches:
            raise SummarizationSkipped("nothing old enough to summarize")

        def summarize_stretch(stretch: tuple[int, int]) -> Awaitable[SummaryResult]:
            start, end = stretch
            return self.services.summarizer.summarize(
                render_messages(messages[start:end]),
                provider,
                content_type=ContentType.CONVERSATION,
                prior_summary=_prior_summary(messages, start),
                instructions=run.instructions,
            )

        outcomes = await self.summarize_concurrently(run, stretches, summarize_stretch)
        applied = skipped = 0
        errors: list[BaseException] = []
        for (start, end), outcome in zip(stretches, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, LLMError | SummarizationError):
                    raise outcome
                errors.append(outcome)
                continue
            if self._apply(conversation, messages[start:end], outcome, run):
                applied += 1
            else:
                skipped += 1
        if errors:
            raise PartialSummarizationError(applied, len(errors), errors[0])
        if not applied:
            raise SummarizationSkipped(
                f"the summary would not reduce tokens ({skipped} stretch(es) left as they were)"
            )
        return applied

    def _fit_summarizer_window(self, conversation: Conversation) -> None:
        """Before a request that would overflow the summarizer's window, prune tool outputs in
        the stretches (no LLM call) until each fits or none is left to prune. Pruning shrinks
        the prompt and with it the recent tail, so the stretches are measured again after each
        pass."""
        limit = self.services.summarizer.single_call_limit
        if limit is None:
            return
        counter = self.services.counter
        while True:
            pruned = 0
            for start, end in self.stretches(conversation.messages):
                messages = conversation.messages  # placeholders replace 1:1: indices hold
                excess = counter.count_text(render_messages(messages[start:end])) - limit
                if excess <= 0:
                    continue
                pruned += prune_tool_outputs(
                    conversation,
                    counter,
                    target_tokens=counter.count_messages(messages) - excess,
                    excluded_tools=set(self.settings.excluded_tools),
                    keep_recent=0,
                    start=start,
                    end=end,
                )
            if not pruned:
                return

    def _apply(
        self,
        conversation: Conversation,
        replaced: Sequence[Message],
        result: SummaryResult,
        run: StrategyRun,
    ) -> bool:
        tokens_before = self.tokens_of(replaced)
        ledger = collect_ledger(replaced)
        header = f"[Summary of my earlier work: {len(replaced)} messages]"
        content = f"{header}\n{result.text}"
        message = self.summary_of(
            replaced, result, content, tokens_before=tokens_before, ledger=ledger
        )
        if int(message.meta["tokens_after"]) >= tokens_before:
            return False
        return self.swap_in(conversation, message, run, result)


def _large_single(message: Message, count: Callable[[Message], int]) -> bool:
    """A lone message worth summarizing: not already a summary, and above the brief size."""
    return message.kind is MessageKind.NORMAL and count(message) > BRIEF_UP_TO_TOKENS


def _prior_summary(messages: Sequence[Message], start: int) -> str:
    """The latest summary before `start` that stays in place, for continuity."""
    for position in range(start - 1, -1, -1):
        if messages[position].kind is MessageKind.SUMMARY:
            return messages[position].content
    return ""
