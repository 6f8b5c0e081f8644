"""When and how long to wait before asking the server again, and the event that says so.

A provider's retry loop asks `RetryPolicy.schedule` for a `RetryScheduled`, yields it into its
stream (or hands it to `complete`'s `on_retry`) and logs it with `log_retry`, then sleeps its
`delay`. Clients learn of retries from the event only; the log line is for the log file.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from forge.llm.errors import LLMError, RateLimitError, kind_of
from forge.llm.stream import RetryScheduled

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
