"""Runs one strategy, or the deterministic fallback, as a run with its events (docs/adr/0039).

A run emits `SummarizationStarted`, the strategy's own `SummarizationProgress`, then
`SummarizationCompleted` (carrying the summaries it put in) or `SummarizationFailed`; a
deterministic step (the fallback, the last resorts) reports as a run with model "none".
What the strategy is comes from its `Capabilities` alone:
- `uses_llm`: it is given a counting clone of the summarization provider (usage goes to the
  cost ledger); while the summarizer breaker is open it does not start; when it fails and room
  is needed (manual or overflow trigger, or usage at the auto-summary threshold), the
  deterministic fallback runs at once, without another LLM call (invariant 3);
- otherwise it is given no provider, and a run with nothing pending emits nothing.

Validity (invariant 1) is checked once, not twice, around a run: the list is known valid after
the previous run's check, else one pass before the run tells; after the run a list that kept
its shape (`Conversation.kept_shape_since`, O(edits)) needs no pass, and one that did not is
repaired if it was valid before. A list that was not valid before (a call still awaiting its
result, the caller's business) is never given a made-up answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from forge.config.settings import ContextSettings
from forge.context.budget import UsageTracker, reached
from forge.context.conversation import Conversation, repair
from forge.context.counting_provider import CountingProvider, UsageSink
from forge.context.errors import (
    PartialSummarizationError,
    SummarizationError,
    SummarizationSkipped,
)
from forge.context.events import (
    EventSink,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationStarted,
    Trigger,
)
from forge.context.fallback import FALLBACK_STRATEGY, FallbackResult, apply_fallback_ladder
from forge.context.strategies.contract import ContextStrategy, StrategyRun, new_run_id
from forge.context.summarizer_breaker import SummarizerBreaker
from forge.llm.errors import LLMError
from forge.llm.protocols import Provider, TokenCounter

logger = logging.getLogger("forge.context")

FALLBACK_TARGET_FACTOR = 0.9
"""The fallback aims this far below the lower of the threshold and auto-summary triggers."""
OVERFLOW_TARGET_FACTOR = 0.75
"""After a context overflow the fallback aims at most this share of the current estimate."""


class StrategyRunner:
    """Runs strategies for one manager: events to `emit`, summary usage to `usage_sink`.

    `budget` gives the prompt budget in force; `summarization_provider` the provider summaries
    go to (both change with the settings, so they are asked at each run)."""

    def __init__(
        self,
        settings: ContextSettings,
        counter: TokenCounter,
        usage: UsageTracker,
        breaker: SummarizerBreaker,
        *,
        emit: EventSink,
        usage_sink: UsageSink | None,
        budget: Callable[[], int],
        summarization_provider: Callable[[], Provider],
    ) -> None:
        self.settings = settings
        self.counter = counter
        self.usage = usage
        self.breaker = breaker
        self.emit = emit
        self.usage_sink = usage_sink
        self._budget = budget
        self._summarization_provider = summarization_provider
        self._valid: tuple[Conversation, int] | None = None
        """The conversation and version last known valid (after a run's check)."""

    @property
    def max_tokens(self) -> int:
        """The prompt budget in tokens."""
        return self._budget()

    def current(self, conversation: Conversation) -> int:
        """Prompt tokens now (see `UsageTracker.current`)."""
        return self.usage.current(conversation)

    def needs_room(self, conversation: Conversation, trigger: Trigger) -> bool:
        """Whether a failed run must be followed by the fallback: a manual or overflow trigger,
        or usage at the auto-summary threshold."""
        return trigger is not Trigger.AUTO or reached(
            self.current(conversation), self.max_tokens, self.settings.auto_summary_threshold
        )

    # --- strategies ------------------------------------------------------------------------
    async def run(
        self,
        strategy: ContextStrategy,
        conversation: Conversation,
        trigger: Trigger,
        *,
        instructions: str = "",
        force: bool = False,
    ) -> bool:
        """One run of `strategy` with its events; on failure, the fallback when room is needed.
        True when the run completed."""
        if not strategy.capabilities.uses_llm:
            return await self._run(strategy, conversation, trigger, instructions, force)
        if not self.breaker.allows():
            logger.info("context: %s not run: %s", strategy.name, self.breaker.why_not())
            if self.needs_room(conversation, trigger):
                self.run_fallback(conversation, trigger)
            return False
        try:
            return await self._run(strategy, conversation, trigger, instructions, force)
        finally:
            notice = self.breaker.take_notice()
            if notice is not None:
                self.emit(notice)

    async def _run(
        self,
        strategy: ContextStrategy,
        conversation: Conversation,
        trigger: Trigger,
        instructions: str,
        force: bool,
    ) -> bool:
        capabilities = strategy.capabilities
        max_tokens = self.max_tokens
        items = strategy.pending_items(conversation, max_tokens, force=force)
        if not capabilities.uses_llm and not items:
            return False
        provider: CountingProvider | None = None
        if capabilities.uses_llm:
            provider = CountingProvider(
                self._summarization_provider(),
                self.usage_sink,
                on_retry=self.emit,
                counter=self.counter,
            )
        model = provider.model if provider is not None else "none"
        run = StrategyRun(new_run_id(), trigger, self.emit, instructions, force, max_tokens)
        if provider is not None:
            logger.info("context: %s run %s (%s) uses model %s", strategy.name, run.run_id,
                        trigger, model)  # fmt: skip
        before = self.current(conversation)
        self.emit(
            SummarizationStarted(run.run_id, strategy.name, trigger, model, before, max_tokens,
                                 items)
        )  # fmt: skip
        started = time.monotonic()
        error: BaseException | None = None
        applied = done = 0
        guard = self._guard(conversation, in_place=capabilities.in_place)
        try:
            done = await strategy.run(conversation, provider, run)
        except PartialSummarizationError as partial:
            error, applied = partial.first_error, partial.applied
        except (LLMError, SummarizationError) as failure:
            error = failure
        finally:
            self._settle(conversation, guard)
        if error is None:
            self.emit(
                SummarizationCompleted(
                    run.run_id, strategy.name, model, done, before, self.current(conversation),
                    time.monotonic() - started, provider.calls if provider is not None else 0,
                    summary="\n\n".join(run.summaries),
                )
            )  # fmt: skip
            return True
        fallback: str | None = None
        if self.needs_room(conversation, trigger):
            fallback = self.fallback(conversation, trigger).describe()
        text = describe_error(error)
        logger.warning("context: %s run %s failed: %s", strategy.name, run.run_id, text)
        self.emit(
            SummarizationFailed(
                run.run_id, strategy.name, model, text, fallback, applied, before,
                self.current(conversation),
            )
        )  # fmt: skip
        return False

    # --- deterministic steps ---------------------------------------------------------------
    def run_step(
        self, name: str, conversation: Conversation, trigger: Trigger, step: Callable[[], int]
    ) -> None:
        """A deterministic `step` (returning how many items it changed) reported as a run of
        its own: started and completed events with model "none"."""
        run_id = new_run_id()
        before = self.current(conversation)
        max_tokens = self.max_tokens
        self.emit(SummarizationStarted(run_id, name, trigger, "none", before, max_tokens, 0))
        started = time.monotonic()
        done = step()
        self.emit(
            SummarizationCompleted(
                run_id, name, "none", done, before, self.current(conversation),
                time.monotonic() - started, 0,
            )
        )  # fmt: skip

    def fallback_target(self, conversation: Conversation, trigger: Trigger) -> int:
        """Where the fallback aims: below the lower trigger, and after an overflow below a
        share of the current estimate."""
        settings = self.settings
        share = min(settings.threshold_trigger, settings.auto_summary_threshold)
        target = int(share * self.max_tokens * FALLBACK_TARGET_FACTOR)
        if trigger is Trigger.OVERFLOW:
            target = min(target, int(self.current(conversation) * OVERFLOW_TARGET_FACTOR))
        return target

    def fallback(self, conversation: Conversation, trigger: Trigger) -> FallbackResult:
        """The deterministic ladder, aiming below the triggers (no LLM call)."""
        overhead = self.current(conversation) - self.usage.local_tokens(conversation)
        guard = self._guard(conversation, in_place=False)
        try:
            result = apply_fallback_ladder(
                conversation,
                self.counter,
                target_tokens=self.fallback_target(conversation, trigger) - overhead,
                excluded_tools=set(self.settings.excluded_tools),
                keep_recent=self.settings.messages_old_threshold,
            )
        finally:
            self._settle(conversation, guard)
        logger.info("context: fallback (%s): %s", trigger, result.describe() or "nothing to do")
        return result

    def run_fallback(self, conversation: Conversation, trigger: Trigger) -> None:
        """The fallback as a run of its own, with events (model "none": no LLM call)."""

        def step() -> int:
            result = self.fallback(conversation, trigger)
            return result.tool_outputs_pruned + result.messages_dropped

        self.run_step(FALLBACK_STRATEGY, conversation, trigger, step)

    # --- invariant 1 -----------------------------------------------------------------------
    def _guard(self, conversation: Conversation, *, in_place: bool) -> tuple[int, bool, bool]:
        """Before a run: (version, known valid, may repair after). An in-place run needs no
        pass: its edits are checked after it."""
        version = conversation.version
        last = self._valid
        known = last is not None and last[0] is conversation and last[1] == version
        if not known and not in_place:
            known = conversation.is_valid()
        return version, known, known or in_place

    def _settle(self, conversation: Conversation, guard: tuple[int, bool, bool]) -> None:
        """After a run: repair (and log) a list the run left invalid, when it may."""
        version, known, may_repair = guard
        if may_repair and not conversation.kept_shape_since(version):
            problems = conversation.problems()
            if problems:
                logger.error(
                    "context: repairing an invalid conversation: %s", "; ".join(problems[:3])
                )
                conversation.replace_range(0, len(conversation), repair(conversation.messages))
            self._valid = (conversation, conversation.version)
        elif known:
            self._valid = (conversation, conversation.version)


def describe_error(error: BaseException) -> str:
    """A failed run's error as its event says it."""
    if isinstance(error, SummarizationSkipped):
        return f"skipped: {error}"
    return f"{type(error).__name__}: {error}"
