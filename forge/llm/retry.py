"""When and how long to wait before asking the server again, the event that says so, and the
one retry loop every provider runs its requests through.

`RetryLoop.stream` and `RetryLoop.call` ask `RetryPolicy.schedule` for a `RetryScheduled`, yield
it into the stream (or hand it to `complete`'s `on_retry`) and log it with `log_retry`, then
sleep its `delay`. Clients learn of retries from the event only; the log line is for the log
file.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from forge.llm.errors import LLMError, RateLimitError, kind_of
from forge.llm.stream import RetryScheduled, StreamEvent

_Answer = TypeVar("_Answer")

RetrySink = Callable[[RetryScheduled], None]
"""Told of each retry `Provider.complete` schedules (a whole reply has no stream to carry it).
Must not block."""


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and "equal" jitter.

    Attempt `n` (0-based) waits a uniformly random time in `[c/2, c]` with `c = min(backoff_max,
    backoff_base * 2**n)`: the jitter spreads clients that failed together, and the floor of
    half the ceiling keeps a burst of 5xx answers from using up every retry within a second
    (full jitter could wait ~0 s each time). A server's
    `retry_after` hint replaces the random wait, capped by `backoff_max` so a hostile or
    confused header cannot stall the agent for an hour.
    """

    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    random_source: random.Random = field(default_factory=random.Random, compare=False)

    def should_retry(self, error: LLMError, retries_done: int) -> bool:
        """Whether to try again after `error`, having already retried `retries_done` times."""
        return error.retryable and retries_done < self.max_retries

    def delay(self, error: LLMError, retries_done: int) -> float:
        """Seconds to wait before the next attempt."""
        if isinstance(error, RateLimitError) and error.retry_after is not None:
            return max(0.0, min(error.retry_after, self.backoff_max))
        ceiling = min(self.backoff_max, self.backoff_base * (2**retries_done))
        ceiling = max(0.0, ceiling)
        return self.random_source.uniform(ceiling / 2, ceiling)

    def schedule(self, error: LLMError, retries_done: int, model: str) -> RetryScheduled:
        """The retry after `error` (call only when `should_retry` said yes), with its delay."""
        return RetryScheduled(
            attempt=retries_done + 1,
            max_attempts=self.max_retries,
            delay=self.delay(error, retries_done),
            error_kind=kind_of(error) or "llm_error",
            message=error.message,
            status_code=error.status,
            model=model,
        )


def log_retry(logger: logging.Logger, retry: RetryScheduled, base_url: str) -> None:
    """One INFO line for the log file. INFO, not WARNING: without a configured handler Python
    prints warnings to stderr, which would tear through the TUI. Nothing reads this text back:
    clients get the `RetryScheduled` event."""
    logger.info(
        "%s from %s (model %s); retry %d of %d in %.3f s: %s",
        retry.error_kind,
        base_url,
        retry.model,
        retry.attempt,
        retry.max_attempts,
        retry.delay,
        retry.message,
    )


class OutputWatch(Protocol):
    """What a stream attempt reports about itself: whether the caller has seen visible output
    (after which a failure is the caller's to handle, never retried). The providers' stream
    assemblers are one."""

    @property
    def output_started(self) -> bool:
        """Whether visible output (text, reasoning, a tool call) has been yielded."""
        ...


StreamAttempt = Callable[[], tuple[AsyncGenerator[StreamEvent, None], OutputWatch]]
"""Starts one attempt at a stream: its events and the watch that says whether output began."""


@dataclass(frozen=True)
class RetryLoop:
    """One provider request's retries: the same events, delays and log lines for every
    provider.

    `redact` masks what must not reach an event or the log (the API key a server echoed) in a
    failure before anything reads it; an exception in `ask_again_on` (a server option turned
    off) asks again at once, without counting as a retry.
    """

    policy: RetryPolicy
    model: str
    base_url: str
    logger: logging.Logger
    redact: Callable[[LLMError], None]
    ask_again_on: tuple[type[Exception], ...] = ()

    def _next_retry(self, error: LLMError, retries_done: int) -> RetryScheduled | None:
        """The retry after `error` (logged), or None when it must not be retried."""
        if not self.policy.should_retry(error, retries_done):
            return None
        retry = self.policy.schedule(error, retries_done, self.model)
        log_retry(self.logger, retry, self.base_url)  # the message is the server's, key masked
        return retry

    async def stream(self, attempt: StreamAttempt) -> AsyncGenerator[StreamEvent, None]:
        """The events of the first attempt that gets through. A retryable failure is retried
        only while nothing visible has been yielded, each retry announced by a
        `RetryScheduled` before the wait; after visible output the typed error propagates and
        the caller decides what to keep."""
        retries_done = 0
        while True:
            events, watch = attempt()
            try:
                async with aclosing(events):
                    async for event in events:
                        yield event
                return
            except self.ask_again_on:
                continue
            except LLMError as error:
                self.redact(error)
                retry = None if watch.output_started else self._next_retry(error, retries_done)
                if retry is None:
                    raise
            yield retry  # before the wait, so a client can say "retrying in 4 s"
            await asyncio.sleep(retry.delay)
            retries_done += 1

    async def call(
        self, attempt: Callable[[], Awaitable[_Answer]], on_retry: RetrySink | None = None
    ) -> _Answer:
        """The answer of the first attempt that gets through; `on_retry` is told of each retry
        before the wait."""
        retries_done = 0
        while True:
            try:
                return await attempt()
            except self.ask_again_on:
                continue
            except LLMError as error:
                self.redact(error)
                retry = self._next_retry(error, retries_done)
                if retry is None:
                    raise
            if on_retry is not None:
                on_retry(retry)
            await asyncio.sleep(retry.delay)
            retries_done += 1
