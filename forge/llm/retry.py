"""When and how long to wait before asking the server again."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from forge.llm.errors import LLMError, RateLimitError


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
