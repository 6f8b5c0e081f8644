"""Context events: small frozen records the manager emits; clients render them.

The agent re-exports these beside its own events, so the whole core speaks one vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from forge.llm.stream import RetryScheduled


class Trigger(StrEnum):
    """Why a summarization ran."""

    AUTO = "auto"
    """A strategy's own trigger, or the auto-summary threshold."""
    MANUAL = "manual"
    """The user asked (/compact)."""
    OVERFLOW = "overflow"
    """The provider said the context overflowed."""


@dataclass(frozen=True, slots=True)
class ContextWarning:
    """Usage crossed the warning threshold (emitted once per crossing)."""

    current_tokens: int
    max_tokens: int
    threshold: float


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """The manager's view of the prompt size, after any summarization before a call."""

    current_tokens: int
    max_tokens: int


@dataclass(frozen=True, slots=True)
class SummarizationStarted:
    """A strategy began summarizing."""

    run_id: str
    strategy: str
    trigger: Trigger
    model: str
    current_tokens: int
    max_tokens: int
    items: int


@dataclass(frozen=True, slots=True)
class SummarizationProgress:
    """One more item (e.g. one tool-call group) finished: `done` items were summarized and
    `failed` items failed or were skipped, out of `total`. A failure never counts as done."""

    run_id: str
    strategy: str
    done: int
    total: int
    failed: int = 0


NOT_RECORDED = {"recorded": False}
"""Field metadata: the field is for clients in the process, not for `forge run`'s jsonl records
(whose fields ADR 0015 keeps as they are)."""


@dataclass(frozen=True, slots=True)
class SummarizationCompleted:
    """A strategy run finished and its summaries were applied: everything a client shows of
    the result, so none has to read the conversation afterwards."""

    run_id: str
    strategy: str
    model: str
    items: int
    tokens_before: int
    tokens_after: int
    duration_s: float
    llm_calls: int
    summary: str = field(default="", metadata=NOT_RECORDED)
    """The text of the summaries the run put in, in order, separated by a blank line ("" for
    a deterministic run: it writes none)."""


@dataclass(frozen=True, slots=True)
class SummarizationFailed:
    """A strategy run failed (wholly or partly); says what fallback was applied, if any."""

    run_id: str
    strategy: str
    model: str
    error: str
    fallback: str | None
    items_applied: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


@dataclass(frozen=True, slots=True)
class SummarizerDisabled:
    """LLM summaries are off for this session: the summarization `model` answered with a
    permanent error (`reason`, e.g. "404"); `advice` says how to fix it. Emitted once; the
    deterministic tiers shorten the context until the settings change."""

    model: str
    reason: str
    advice: str

    @property
    def text(self) -> str:
        """The notice as one line for the user."""
        return (
            f"Summaries are off: model {self.model} answered {self.reason}. Older tool outputs "
            f"will be shortened instead. Fix: {self.advice}"
        )


ContextEvent = (
    ContextWarning
    | ContextUsage
    | SummarizationStarted
    | SummarizationProgress
    | SummarizationCompleted
    | SummarizationFailed
    | SummarizerDisabled
)

ManagerEvent = ContextEvent | RetryScheduled
"""What a context manager emits: its own events, and the summarization provider's retries
(the provider's `RetryScheduled`, as the agent's own requests yield it: docs/adr/0013)."""

EventSink = Callable[[ManagerEvent], None]
"""Where the manager sends events (given at its construction). Must not block; the agent
forwards them to the running turn's client."""


def drop_event(event: ManagerEvent) -> None:
    """An `EventSink` for a manager nobody listens to: events go nowhere."""
