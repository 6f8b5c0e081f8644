"""The one contract every context strategy keeps (docs/adr/0039).

A strategy declares what it is in `capabilities` (a frozen `Capabilities`) and does its work
in one `run`. The manager and the runner (`forge.context.runner`) read only the capabilities;
they never ask which class a strategy is. `DeterministicStrategy` and `SummarizationStrategy`
are helper bases for the two kinds Forge ships, not shapes the manager tells apart.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from forge.context.conversation import Conversation
from forge.context.events import EventSink, Trigger
from forge.llm.protocols import Provider


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a strategy is, as the manager and the runner need to know it."""

    uses_llm: bool = False
    """A summarizer: `run` is given the summarization provider (counted for the cost ledger)
    and does not start while the summarizer breaker is open; its failure falls back to the
    deterministic ladder when room is needed. Else `run` is given no provider, cannot fail on
    one, and a run with nothing pending emits no events."""
    forceable: bool = True
    """The auto-summary threshold may run it regardless of its own trigger (and /compact, when
    no strategy `compacts`)."""
    compacts: bool = False
    """/compact and a context overflow run it (forced) in preference to the forceable ones."""
    token_triggered: bool = False
    """Its own trigger is the token count: such runs obey the no-loop governor."""
    in_place: bool = False
    """It only replaces messages one for one by same-shaped ones, so the list needs no
    validity pass before a run (its edits are checked, O(edits))."""


@dataclass(slots=True)
class StrategyRun:
    """One run of a strategy as the runner started it."""

    run_id: str
    trigger: Trigger
    events: EventSink
    instructions: str = ""
    """The user's instructions (/compact), passed to the summarizer."""
    force: bool = False
    """Run even if the strategy's own trigger did not fire."""
    max_tokens: int = 0
    """The prompt budget in tokens."""
    summaries: list[str] = field(default_factory=list)
    """The text of every summary this run put into the conversation, in order (what its
    completion event carries)."""


def new_run_id() -> str:
    """A short random id for a strategy run."""
    return uuid.uuid4().hex[:12]


class ContextStrategy(ABC):
    """One way of shrinking the conversation: small, ordered, composed by the manager."""

    name: str = "strategy"
    capabilities: ClassVar[Capabilities] = Capabilities()

    def enabled(self) -> bool:
        """Whether the settings in force switch this strategy on (default: always)."""
        return True

    @abstractmethod
    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Whether this strategy's own trigger fires now."""

    @abstractmethod
    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        """How many items a run now would change or summarize."""

    @abstractmethod
    async def run(
        self, conversation: Conversation, provider: Provider | None, run: StrategyRun
    ) -> int:
        """Shrink `conversation` in place; returns how many items were changed. `provider` is
        the summarization provider when `capabilities.uses_llm`, else None. Progress goes to
        `run.events`; a summary put in goes to `run.summaries`. A failure raises
        `SummarizationError` (or `PartialSummarizationError` after applying some items) or
        `LLMError`."""
