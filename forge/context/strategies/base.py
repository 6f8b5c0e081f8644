"""What every built-in summarizing strategy shares: its services and the safe way to swap a
summary in.

A summarizing strategy keeps the one contract (`forge.context.strategies.contract`): the runner
calls `run` with the summarization provider and a `StrategyRun` carrying the run id, trigger,
user instructions and whether the strategy's own trigger is bypassed (`force`, used by
/compact and the auto-summary threshold); `run` hands over to `summarize_with`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from forge.config.settings import ContextSettings
from forge.context.adaptive import AdaptiveSummarizer, SummaryResult
from forge.context.cache_pricing import NO_CACHE, CachePricing
from forge.context.conversation import Conversation
from forge.context.errors import SummarizationError
from forge.context.events import SummarizationProgress
from forge.context.ledger import Ledger
from forge.context.recall import RECALL_KEYS_META, folded_recall_ids, recall_keys_line
from forge.context.strategies.contract import Capabilities, ContextStrategy, StrategyRun
from forge.context.summary_archive import SummaryArchive, SummaryRecord
from forge.context.tally import ConversationTally, Tallies
from forge.llm.messages import Message, MessageKind, Role
from forge.llm.protocols import Provider, TokenCounter

logger = logging.getLogger("forge.context")

ItemT = TypeVar("ItemT")


@dataclass(slots=True)
class StrategyServices:
    """What a manager's strategies share: settings, counter, summarizer, summary files and the
    incremental bookkeeping of each conversation (`tallies`, made for `counter` when omitted)."""

    settings: ContextSettings
    counter: TokenCounter
    summarizer: AdaptiveSummarizer
    archive: SummaryArchive | None = None
    tallies: Tallies | None = None
    cache_pricing: CachePricing = NO_CACHE
    """The main model's prompt-cache prices: when a rewrite nothing forces pays
    (`forge.context.cache_pricing`; the manager's `set_cache_pricing` changes it)."""
    sent: tuple[int, int] | None = None
    """(conversation id, version) of the request last sent: a rewrite since then is paid
    already (`forge.context.rewrite_gate.rewritten_from`)."""

    def __post_init__(self) -> None:
        if self.tallies is None:
            self.tallies = Tallies(self.counter)

    def tally(self, conversation: Conversation) -> ConversationTally:
        """The incremental bookkeeping of `conversation` (see `forge.context.tally`)."""
        if self.tallies is None:
            self.tallies = Tallies(self.counter)
        return self.tallies.of(conversation)


def replace_by_ids(
    conversation: Conversation, replaced_ids: Sequence[str], inserted: Sequence[Message]
) -> bool:
    """Replace the contiguous messages with these ids (found by id, so appends made while a
    summary was being written are harmless). False, and nothing changed, if they are no longer
    there as one contiguous stretch in that order."""
    if not replaced_ids:
        return False
    try:
        start = conversation.index_of(replaced_ids[0])
    except ValueError:
        return False
    end = start + len(replaced_ids)
    current = tuple(message.id for message in conversation.messages[start:end])
    if current != tuple(replaced_ids):
        return False
    conversation.replace_range(start, end, inserted)
    return True


def summary_message(
    *,
    role: Role,
    kind: MessageKind,
    content: str,
    replaced: Sequence[Message],
    strategy: str,
    result: SummaryResult,
    tokens_before: int,
    counter: TokenCounter,
    ledger: Ledger,
    name_keys: bool = True,
) -> Message:
    """A summary (or goal batch) replacing `replaced`, with meta saying what it cost. It ends
    with the recall keys of every output it folded (`forge.context.recall.folded_recall_ids`;
    the full ids in `meta["recall_keys"]`), so each original stays one `recall` away —
    unless `name_keys` is False: the content then holds the outputs word for word."""
    folded = folded_recall_ids(replaced)
    keys = recall_keys_line(folded) if name_keys else ""
    content = f"{content.rstrip()}\n{keys}" if keys else content
    draft = Message(role=role, content=content, kind=kind)
    tokens_after = counter.count_message(draft)
    return Message(
        role=role,
        content=content,
        kind=kind,
        replaces=tuple(message.id for message in replaced),
        meta={
            "strategy": strategy,
            "model": result.model,
            "level": result.level.value,
            "llm_calls": result.llm_calls,
            "collapse_depth": result.collapse_depth,
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "ledger": ledger.to_meta(),
            RECALL_KEYS_META: folded,
        },
    )


def prior_summary_before(messages: Sequence[Message], start: int) -> str:
    """The latest summary (or goal batch) before `start` that stays in place, for continuity
    ("" when there is none). Every LLM summary run passes it to the summarizer."""
    for position in range(start - 1, -1, -1):
        if messages[position].kind in (MessageKind.SUMMARY, MessageKind.GOAL_BATCH):
            return messages[position].content
    return ""


class SummarizationStrategy(ContextStrategy):
    """Base of the built-in strategies that ask the summarization model."""

    name: str = "strategy"
    capabilities = Capabilities(uses_llm=True)

    def __init__(self, services: StrategyServices) -> None:
        self.services = services

    @property
    def settings(self) -> ContextSettings:
        """The context settings in force."""
        return self.services.settings

    @abstractmethod
    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Whether this strategy's own trigger fires now."""

    @abstractmethod
    def pending_items(
        self, conversation: Conversation, max_tokens: int = 0, *, force: bool = False
    ) -> int:
        """How many items a run now would summarize."""

    async def run(
        self, conversation: Conversation, provider: Provider | None, run: StrategyRun
    ) -> int:
        """The contract's entry point: `summarize_with` the summarization provider."""
        if provider is None:
            raise SummarizationError(f"{self.name} needs a summarization provider")
        return await self.summarize_with(conversation, provider, run)

    @abstractmethod
    async def summarize_with(
        self, conversation: Conversation, provider: Provider, run: StrategyRun
    ) -> int:
        """Summarize in place; returns how many items were summarized."""

    def tokens_of(self, messages: Sequence[Message]) -> int:
        """What `messages` cost, each counted as a prompt message (the `tokens_before` of a
        summary replacing them)."""
        counter = self.services.counter
        return sum(counter.count_message(message) for message in messages)

    def summary_of(
        self,
        replaced: Sequence[Message],
        result: SummaryResult,
        content: str,
        *,
        tokens_before: int,
        ledger: Ledger,
        role: Role = "assistant",
        kind: MessageKind = MessageKind.SUMMARY,
        name_keys: bool = True,
    ) -> Message:
        """`summary_message` written by this strategy with the manager's counter."""
        return summary_message(
            role=role,
            kind=kind,
            content=content,
            replaced=replaced,
            strategy=self.name,
            result=result,
            tokens_before=tokens_before,
            counter=self.services.counter,
            ledger=ledger,
            name_keys=name_keys,
        )

    def swap_in(
        self, conversation: Conversation, message: Message, run: StrategyRun, result: SummaryResult
    ) -> bool:
        """Put `message` in place of the messages it replaces and archive it; False, and
        nothing changed, if they are no longer there (see `replace_by_ids`)."""
        if not replace_by_ids(conversation, message.replaces, [message]):
            return False
        self.archive(message, run, result)
        return True

    async def summarize_concurrently(
        self,
        run: StrategyRun,
        items: Sequence[ItemT],
        summarize_one: Callable[[ItemT], Awaitable[SummaryResult]],
    ) -> list[SummaryResult | BaseException]:
        """Summarize every item at once (at most `max_concurrent_summaries` items under way;
        the summarizer's own limiter bounds the requests), one progress event per finished
        item, counting successes and failures apart; each outcome, in item order, is the
        result or the exception it raised. Once the summarizer breaker refuses requests the
        items not yet sent fail at once with `SummarizerUnavailable`, without a request."""
        semaphore = asyncio.Semaphore(self.settings.max_concurrent_summaries)
        done = failed = 0

        async def bounded(item: ItemT) -> SummaryResult:
            nonlocal done, failed
            try:
                async with semaphore:
                    result = await summarize_one(item)
            except BaseException:
                failed += 1
                self.progress(run, done, len(items), failed)
                raise
            done += 1
            self.progress(run, done, len(items), failed)
            return result

        return await asyncio.gather(*(bounded(item) for item in items), return_exceptions=True)

    def progress(self, run: StrategyRun, done: int, total: int, failed: int = 0) -> None:
        """Emit a progress event for this run: `done` items summarized, `failed` not."""
        run.events(SummarizationProgress(run.run_id, self.name, done, total, failed))

    def archive(self, message: Message, run: StrategyRun, result: SummaryResult) -> None:
        """Note the summary for the run's completion event, and write the summary file when
        the manager has a summary directory."""
        run.summaries.append(message.content)
        if self.services.archive is None:
            return
        record = SummaryRecord(
            message_id=message.id,
            strategy=self.name,
            model=result.model,
            trigger=run.trigger.value,
            tokens_in=int(message.meta.get("tokens_before", 0)),
            tokens_out=int(message.meta.get("tokens_after", 0)),
            replaced_ids=message.replaces,
            text=message.content,
            llm_calls=result.llm_calls,
            collapse_depth=result.collapse_depth,
            created=time.time(),
        )
        try:
            self.services.archive.write(record)
        except OSError as error:  # a full disk must not lose the summary itself
            logger.warning("could not write summary file: %s", error)
