"""The adaptive summarizer: picks how to summarize a text by its size.

- under `NOTHING_BELOW_TOKENS` (100): nothing to gain; the text is returned unchanged;
- up to `BRIEF_UP_TO_TOKENS` (500): one brief summary;
- up to the single-call limit (the summarizer's input window; `chunk_size` when unknown): one
  call;
- above that limit (whatever the size band): map-reduce. Split into `chunk_size` chunks (at
  most the limit) with `chunk_overlap` on paragraph, sentence and character boundaries,
  summarize the chunks concurrently (`max_concurrent`), collapse groups of partial summaries
  while together they exceed `token_max` (at most `max_collapse_depth` rounds, then a
  warning), and write one final synthesis.

Every request, map and reduce steps included, goes through one limiter shared by everything
that uses this summarizer (`max_in_flight`, from `context.max_concurrent_summaries`), and
through the `SummarizerBreaker`, which refuses requests while the summarization model is known
to fail. `max_concurrent` only caps one document's share of the limiter. When one request of a
map-reduce fails, the document's other requests are cancelled.

Errors propagate as typed errors (`forge.llm.errors.*`, `EmptySummaryError`,
`SummarizerUnavailable`); this module never returns an empty summary.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from forge.config.settings import SummarizerSettings
from forge.context import prompts
from forge.context.chunking import split_text_async
from forge.context.errors import EmptySummaryError
from forge.context.prompts import ContentType
from forge.context.summarizer_breaker import SummarizerBreaker
from forge.llm.messages import Message
from forge.llm.protocols import Provider, TokenCounter
from forge.llm.text_segments import count_text_async

logger = logging.getLogger("forge.context")

NOTHING_BELOW_TOKENS = 100
"""Texts shorter than this are not worth an LLM call."""
BRIEF_UP_TO_TOKENS = 500
"""Texts up to this size get one brief summary."""
MINIMUM_TARGET_TOKENS = 32
"""No summary is asked to be shorter than this."""


class SummaryLevel(StrEnum):
    """How a text was summarized."""

    NONE = "none"
    BRIEF = "brief"
    SINGLE = "single"
    MAP_REDUCE = "map_reduce"


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """A summary and what it cost. `compression_ratio` is input tokens per output token."""

    text: str
    level: SummaryLevel
    input_tokens: int
    output_tokens: int
    collapse_depth: int
    model: str
    duration_s: float
    llm_calls: int
    chunks: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def compression_ratio(self) -> float:
        """input_tokens / output_tokens (1.0 when nothing was summarized)."""
        return self.input_tokens / self.output_tokens if self.output_tokens else 1.0


class AdaptiveSummarizer:
    """Summarizes text of any size with as few calls as its size allows.

    `single_call_limit` is the most input tokens one request may carry (from the summarization
    model's window); None means `chunk_size`. Chunks never exceed it either. `max_in_flight`
    is the most requests in flight at once across every caller; `breaker` (a fresh one when
    omitted) decides whether a request may be sent at all.
    """

    def __init__(
        self,
        counter: TokenCounter,
        settings: SummarizerSettings,
        *,
        single_call_limit: int | None = None,
        max_in_flight: int = 5,
        breaker: SummarizerBreaker | None = None,
    ) -> None:
        self.counter = counter
        self.settings = settings
        self.single_call_limit = single_call_limit
        self.max_in_flight = max_in_flight
        self.limiter = asyncio.Semaphore(max_in_flight)
        """The one limiter every summary request passes through."""
        self.breaker = breaker if breaker is not None else SummarizerBreaker()

    @property
    def chunk_size(self) -> int:
        """Tokens per map-reduce chunk: `chunk_size`, lowered to fit the single-call limit."""
        if self.single_call_limit is None:
            return self.settings.chunk_size
        return max(
            self.settings.chunk_overlap + 1, min(self.settings.chunk_size, self.single_call_limit)
        )

    @property
    def input_limit(self) -> int:
        """The most input tokens one request may carry: `single_call_limit`, else `chunk_size`.
        A text above it is map-reduced, so no request overflows the summarizer's window."""
        if self.single_call_limit is None:
            return self.settings.chunk_size
        return self.single_call_limit

    def level_for(self, input_tokens: int) -> SummaryLevel:
        """The level a text of `input_tokens` tokens is summarized at."""
        if input_tokens < NOTHING_BELOW_TOKENS:
            return SummaryLevel.NONE
        if input_tokens > self.input_limit:
            return SummaryLevel.MAP_REDUCE
        if input_tokens <= BRIEF_UP_TO_TOKENS:
            return SummaryLevel.BRIEF
        return SummaryLevel.SINGLE

    async def summarize(
        self,
        text: str,
        provider: Provider,
        *,
        content_type: ContentType = ContentType.DOCUMENT,
        target_tokens: int | None = None,
        prior_summary: str = "",
        instructions: str = "",
    ) -> SummaryResult:
        """Summarize `text` with `provider`, aiming at `target_tokens` (default: a quarter of the
        input, at most `token_max`). Raises the provider's typed errors or EmptySummaryError."""
        started = time.monotonic()
        input_tokens = await count_text_async(self.counter.count_text, text)
        level = self.level_for(input_tokens)
        target = target_tokens or min(self.settings.token_max, max(64, input_tokens // 4))
        target = max(MINIMUM_TARGET_TOKENS, target)
        if level is SummaryLevel.NONE:
            return SummaryResult(
                text=text,
                level=level,
                input_tokens=input_tokens,
                output_tokens=input_tokens,
                collapse_depth=0,
                model="",
                duration_s=time.monotonic() - started,
                llm_calls=0,
            )
        if level is SummaryLevel.BRIEF or level is SummaryLevel.SINGLE:
            if level is SummaryLevel.BRIEF:
                build_request = prompts.brief_request
                target = min(target, max(MINIMUM_TARGET_TOKENS, input_tokens // 3))
            else:
                build_request = prompts.single_request
            request = build_request(
                text,
                content_type,
                target_tokens=target,
                prior_summary=prior_summary,
                instructions=instructions,
            )
            summary = await self.ask(provider, request)
            return self._result(summary, level, input_tokens, 0, provider, started, 1)
        return await self._map_reduce(
            text, input_tokens, provider, content_type, target, prior_summary, instructions, started
        )

    async def _map_reduce(
        self,
        text: str,
        input_tokens: int,
        provider: Provider,
        content_type: ContentType,
        target: int,
        prior_summary: str,
        instructions: str,
        started: float,
    ) -> SummaryResult:
        chunks = await split_text_async(
            text, self.chunk_size, self.settings.chunk_overlap, self.counter.count_text
        )
        share = asyncio.Semaphore(self.settings.max_concurrent)
        calls = 0

        async def ask(request: list[Message]) -> str:
            nonlocal calls
            async with share:
                calls += 1
                return await self.ask(provider, request)

        map_target = max(64, min(self.chunk_size // 4, target))
        summaries = list(
            await _all_or_none(
                *(
                    ask(
                        prompts.map_request(
                            chunk.text,
                            index,
                            len(chunks),
                            content_type,
                            target_tokens=map_target,
                        )
                    )
                    for index, chunk in enumerate(chunks, start=1)
                )
            )
        )
        depth = 0
        warnings: list[str] = []
        token_max = self.settings.token_max
        while self._total(summaries) > token_max:
            if depth >= self.settings.max_collapse_depth:
                warning = (
                    f"partial summaries still hold {self._total(summaries)} tokens after "
                    f"{depth} collapse rounds (token_max {token_max}); writing the final "
                    "summary from them anyway"
                )
                logger.warning("adaptive summarizer: %s", warning)
                warnings.append(warning)
                break
            depth += 1
            groups = self._groups(summaries, token_max)
            summaries = list(
                await _all_or_none(
                    *(
                        ask(
                            prompts.collapse_request(
                                group,
                                depth,
                                content_type,
                                target_tokens=max(64, min(target, self._total(group) // 2)),
                            )
                        )
                        for group in groups
                    )
                )
            )
        final = await ask(
            prompts.synthesis_request(
                summaries,
                content_type,
                target_tokens=target,
                prior_summary=prior_summary,
                instructions=instructions,
            )
        )
        return self._result(
            final,
            SummaryLevel.MAP_REDUCE,
            input_tokens,
            depth,
            provider,
            started,
            calls,
            chunks=len(chunks),
            warnings=tuple(warnings),
        )

    def _total(self, texts: Sequence[str]) -> int:
        return sum(self.counter.count_text(text) for text in texts)

    def _groups(self, summaries: Sequence[str], token_max: int) -> list[list[str]]:
        """Consecutive summaries packed into groups of at most `token_max` tokens (a summary
        larger than that forms a group alone)."""
        groups: list[list[str]] = []
        current: list[str] = []
        current_tokens = 0
        for summary in summaries:
            tokens = self.counter.count_text(summary)
            if current and current_tokens + tokens > token_max:
                groups.append(current)
                current, current_tokens = [], 0
            current.append(summary)
            current_tokens += tokens
        if current:
            groups.append(current)
        return groups

    def _result(
        self,
        summary: str,
        level: SummaryLevel,
        input_tokens: int,
        depth: int,
        provider: Provider,
        started: float,
        calls: int,
        *,
        chunks: int = 0,
        warnings: tuple[str, ...] = (),
    ) -> SummaryResult:
        return SummaryResult(
            text=summary,
            level=level,
            input_tokens=input_tokens,
            output_tokens=self.counter.count_text(summary),
            collapse_depth=depth,
            model=provider.model,
            duration_s=time.monotonic() - started,
            llm_calls=calls,
            chunks=chunks,
            warnings=warnings,
        )

    async def ask(self, provider: Provider, request: Sequence[Message]) -> str:
        """One summarization request through the shared limiter and the breaker; an answer
        with no text is an error, never an empty summary."""
        async with self.limiter, self.breaker.attempt(provider.model):
            completion = await provider.complete(request)
        text = completion.message.content.strip()
        if not text:
            raise EmptySummaryError(f"the summarization model {provider.model} returned no text")
        return text


async def _all_or_none(*requests: Awaitable[str]) -> list[str]:
    """Every answer, in order; on the first failure the other requests are cancelled and the
    failure raised (a document whose summary cannot be finished sends no more requests)."""
    tasks = [asyncio.ensure_future(request) for request in requests]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
