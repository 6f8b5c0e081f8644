"""The summarizer breaker: a failing summarization model must never stall the agent.

Not to be confused with the agent's `circuit_breaker` (repeated tool errors). Every summary
request passes through `SummarizerBreaker.attempt`:

- a *permanent* error (401/403 `AuthenticationError`, 404 `ModelNotFoundError`, 429
  `QuotaExhaustedError`) turns LLM summaries off for the session: every later attempt raises
  `SummarizerUnavailable` at once, without a request, and `take_notice` hands out one
  `SummarizerDisabled` event naming the model and the fix. `rearm` (a settings change) turns
  them back on;
- a *transient* error (timeouts, connection errors, 5xx, 429 rate limits, streams cut off,
  malformed replies) opens the breaker for a backoff window that doubles with each failure in
  a row (`BACKOFF_BASE_S`, capped at `BACKOFF_MAX_S`); attempts inside the window raise
  `SummarizerUnavailable`. Any success closes it again;
- after a failure, until a request has succeeded again, requests go one at a time (a probe),
  so a model known to fail costs one request per window, not one per item in flight. At start
  and after `rearm` nothing is known against the model: the first batch goes out whole, as
  parallel as the limiter allows (docs/adr/0052: a probe there made every session's first
  compaction wait one extra round trip).

A context overflow or an empty answer says nothing about the model's health and changes
nothing here.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from forge.context.errors import SummarizationError
from forge.context.events import SummarizerDisabled
from forge.llm.errors import (
    AuthenticationError,
    ContextOverflowError,
    LLMError,
    ModelNotFoundError,
    QuotaExhaustedError,
)

logger = logging.getLogger("forge.context")

BACKOFF_BASE_S = 30.0
"""Seconds summaries pause after the first transient failure in a row."""
BACKOFF_MAX_S = 600.0
"""The longest pause after transient failures (the doubling stops here)."""
SETTINGS_ADVICE = "/settings → Summarization Model"
"""Where the user fixes a summarization model that cannot answer."""

PERMANENT_ERRORS: tuple[type[LLMError], ...] = (
    AuthenticationError,
    ModelNotFoundError,
    QuotaExhaustedError,
)
"""Errors that asking again cannot fix: summaries turn off until the settings change."""


class SummarizerUnavailable(SummarizationError):
    """No request was made: summaries are off, or paused after transient failures."""


def is_permanent(error: BaseException) -> bool:
    """Whether `error` turns summaries off for the session."""
    return isinstance(error, PERMANENT_ERRORS)


def _reason(error: LLMError) -> str:
    if isinstance(error, QuotaExhaustedError):
        return "that the quota is exhausted (429)"
    if error.status is not None:
        return str(error.status)
    return type(error).__name__


class SummarizerBreaker:
    """Decides whether a summary request may be sent now; see the module docstring.

    `clock` returns seconds (monotonic); tests pass their own to step through windows.
    """

    def __init__(
        self,
        *,
        backoff_base: float = BACKOFF_BASE_S,
        backoff_max: float = BACKOFF_MAX_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.clock = clock
        self._disabled: SummarizerDisabled | None = None
        self._notice_pending = False
        self._failures = 0
        self._retry_at: float | None = None
        self._confirmed = True
        """False after a failure until a request succeeds: requests then go one at a time."""
        self._probe = asyncio.Lock()

    # --- state -----------------------------------------------------------------------------
    @property
    def disabled(self) -> SummarizerDisabled | None:
        """The notice when summaries are off for the session, else None."""
        return self._disabled

    @property
    def retry_at(self) -> float | None:
        """When (on `clock`) the backoff window ends; None when not backing off."""
        return self._retry_at

    def allows(self) -> bool:
        """Whether a summary request may be sent now."""
        if self._disabled is not None:
            return False
        return self._retry_at is None or self.clock() >= self._retry_at

    def why_not(self) -> str:
        """Why requests are refused now ("" when they are allowed)."""
        notice = self._disabled
        if notice is not None:
            return f"summaries are off: model {notice.model} answered {notice.reason}"
        if self._retry_at is not None and self.clock() < self._retry_at:
            wait = self._retry_at - self.clock()
            return f"summaries paused for {wait:.0f} s after {self._failures} failure(s) in a row"
        return ""

    def check(self) -> None:
        """Raise `SummarizerUnavailable` unless a request may be sent now."""
        reason = self.why_not()
        if reason:
            raise SummarizerUnavailable(reason)

    # --- requests --------------------------------------------------------------------------
    @asynccontextmanager
    async def attempt(self, model: str) -> AsyncIterator[None]:
        """Around one summary request to `model`: refuses (SummarizerUnavailable) when the
        breaker is open, sends probes one at a time after a failure, and records how the
        request ended."""
        self.check()
        if not self._confirmed:
            async with self._probe:
                self.check()  # the probe before this one may have failed
                if not self._confirmed:
                    async with self._recording(model):
                        yield
                    return
        async with self._recording(model):
            yield

    @asynccontextmanager
    async def _recording(self, model: str) -> AsyncIterator[None]:
        failures_before = self._failures
        try:
            yield
        except LLMError as error:
            # Requests sent together that fail together are one failure, not one per request.
            self.record_failure(error, model, escalate=self._failures == failures_before)
            raise
        self.record_success()

    def record_success(self) -> None:
        """A summary request succeeded: close the breaker."""
        self._confirmed = True
        self._failures = 0
        self._retry_at = None

    def record_failure(self, error: LLMError, model: str, *, escalate: bool = True) -> None:
        """A summary request to `model` failed with `error` (after the provider's retries).
        `escalate` False: a request in flight alongside it has already failed and opened the
        window, which this transient failure neither lengthens nor moves."""
        if isinstance(error, ContextOverflowError):
            return  # the input was too large for the window; the model itself is fine
        self._confirmed = False
        if is_permanent(error):
            if self._disabled is None:
                self._disabled = SummarizerDisabled(model, _reason(error), SETTINGS_ADVICE)
                self._notice_pending = True
                logger.warning("context: %s", self._disabled.text)
            return
        if not escalate:
            return
        self._failures += 1
        wait = min(self.backoff_max, self.backoff_base * 2 ** (self._failures - 1))
        self._retry_at = self.clock() + wait
        logger.warning(
            "context: summaries paused for %.0f s: model %s failed (%s: %s)",
            wait,
            model,
            type(error).__name__,
            error,
        )

    def take_notice(self) -> SummarizerDisabled | None:
        """The `SummarizerDisabled` notice, once, the first time it is asked for after the
        breaker turned summaries off; None otherwise."""
        if not self._notice_pending:
            return None
        self._notice_pending = False
        return self._disabled

    def rearm(self) -> None:
        """The settings changed: summaries are on again, with nothing known against the model."""
        self._disabled = None
        self._notice_pending = False
        self._failures = 0
        self._retry_at = None
        self._confirmed = True
