"""The context manager: budget, warnings, strategies, auto-summarization and the fallback.

`evaluate_and_summarize` runs before every LLM call:
1. warn once when usage crosses `warning_threshold`;
2. run each strategy whose own trigger fires, in order (tool calls, threshold, goal batch);
3. at `auto_summary_threshold`, run the forceable strategies that did not run yet regardless
   of their triggers, then the fallback ladder if still above it;
4. report the usage the next request will have.

A run that fails emits `SummarizationFailed`; when room is needed (manual or overflow trigger,
or usage at the auto threshold) the deterministic fallback runs at once, without an LLM call.
Automatic compaction that frees less than 5 % pauses (see `CompactionGovernor`).

Every summary request passes one limiter (`max_concurrent_summaries`) and the summarizer
breaker (`forge.context.summarizer_breaker`): while it is open, strategies that use the LLM do
not start (the fallback runs when room is needed), and when it turns summaries off the manager
emits one `SummarizerDisabled`. Summary requests use a clone of the provider with the
summary timeout and retries (`context.summary_request_timeout`, `summary_max_retries`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from forge.config.settings import ContextSettings
from forge.context.adaptive import AdaptiveSummarizer
from forge.context.budget import (
    CompactionGovernor,
    UsageTracker,
    WarningLatch,
    prompt_budget,
    reached,
)
from forge.context.conversation import Conversation, repair
from forge.context.counting_provider import CountingProvider, UsageSink
from forge.context.errors import (
    PartialSummarizationError,
    SummarizationError,
    SummarizationSkipped,
)
from forge.context.events import (
    ContextEvent,
    ContextUsage,
    ContextWarning,
    EventSink,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationStarted,
    Trigger,
)
from forge.context.fallback import FALLBACK_STRATEGY, FallbackResult, apply_fallback_ladder
from forge.context.last_resort import cap_outputs_until, cut_old_instructions
from forge.context.protocols import Strategy
from forge.context.request_breakdown import request_breakdown
from forge.context.strategies import (
    GoalBatchCompactionStrategy,
    StrategyRun,
    StrategyServices,
    SummarizationStrategy,
    ThresholdSummarizationStrategy,
    ToolCallSummarizationStrategy,
)
from forge.context.strategies.base import new_run_id
from forge.context.strategies.deterministic import DeterministicStrategy
from forge.context.strategies.ingest_cap import IngestCapStrategy
from forge.context.strategies.instructions import InstructionCondensationStrategy
from forge.context.strategies.masking import ObservationMaskingStrategy
from forge.context.summarizer_breaker import SummarizerBreaker
from forge.context.summary_archive import SummaryArchive
from forge.context.tally import Tallies
from forge.llm.errors import LLMError
from forge.llm.model_info import context_window as model_context_window
from forge.llm.model_info import default_reply_headroom
from forge.llm.protocols import CountsAhead, ModelCloner, Provider, TokenCounter, ToolSpec

logger = logging.getLogger("forge.context")

SUMMARIZER_PROMPT_RESERVE = 1024
"""Tokens of a summarization request taken by instructions and the prior summary."""
FALLBACK_TARGET_FACTOR = 0.9
"""The fallback aims this far below the lower of the threshold and auto-summary triggers."""
OVERFLOW_TARGET_FACTOR = 0.75
"""After a context overflow the fallback aims at most this share of the current estimate."""


def summarizer_input_limit(window: int) -> int:
    """The most input tokens one summarization request may carry in a window of `window`."""
    return max(256, window - default_reply_headroom(window) - SUMMARIZER_PROMPT_RESERVE)


AnyStrategy = Strategy | DeterministicStrategy
"""A tier the manager runs: an LLM strategy or a deterministic one."""


def default_strategies(services: StrategyServices) -> list[AnyStrategy]:
    """The tiers, cheapest first: ingest cap -> observation masking -> tool-call summaries ->
    threshold summaries -> goal batches, sharing `services`."""
    settings, counter = services.settings, services.counter
    return [
        IngestCapStrategy(settings, counter),
        ObservationMaskingStrategy(settings, counter),
        ToolCallSummarizationStrategy(services),
        InstructionCondensationStrategy(services),
        ThresholdSummarizationStrategy(services),
        GoalBatchCompactionStrategy(services),
    ]


class Manager:
    """Implements `ContextManagerProtocol`: keeps the conversation within the prompt budget.

    The budget is `settings.max_tokens`, else `context_window` minus the reply headroom.
    `summarization_model` ("" = the main model) picks the model summaries go to;
    `summarizer_window` overrides that model's context window (else looked up by name).
    `summary_dir`, when given, receives one markdown file per summary. `strategies` replaces
    the default ToolCall -> Threshold -> GoalBatch list. `breaker` replaces the default
    `SummarizerBreaker` (tests pass one with their own clock).
    """

    def __init__(
        self,
        settings: ContextSettings,
        provider: Provider,
        counter: TokenCounter,
        *,
        context_window: int,
        summarization_model: str = "",
        event_sink: EventSink | None = None,
        summary_dir: Path | None = None,
        strategies: Sequence[AnyStrategy] | None = None,
        summarizer_window: int | None = None,
        breaker: SummarizerBreaker | None = None,
    ) -> None:
        self.settings = settings
        self.counter = counter
        self.event_sink: EventSink | None = event_sink
        self.usage_sink: UsageSink | None = None
        """Told the model and usage of every summarization request (the cost ledger)."""
        self._provider = provider
        self._max_tokens = prompt_budget(settings, context_window)
        self._context_window = context_window
        self._summarization_model = summarization_model.strip()
        self._summarizer_window = summarizer_window
        self._clone: tuple[Provider, str, Provider] | None = None
        self._summarization_provider: Provider | None = None
        self.breaker = breaker if breaker is not None else SummarizerBreaker()
        self.summarizer = AdaptiveSummarizer(
            counter,
            settings.summarizer,
            max_in_flight=settings.max_concurrent_summaries,
            breaker=self.breaker,
        )
        self.tallies = Tallies(counter)
        archive = SummaryArchive(summary_dir) if summary_dir is not None else None
        self.services = StrategyServices(
            settings, counter, self.summarizer, archive, tallies=self.tallies
        )
        self._strategies: list[AnyStrategy] = (
            list(strategies) if strategies is not None else default_strategies(self.services)
        )
        for strategy in self._strategies:
            if isinstance(strategy, ObservationMaskingStrategy):
                # Aging groups go to the LLM tier while it is on and working; else masking.
                strategy.summaries_active = self._tool_call_summaries_active
        self._usage = UsageTracker(counter, self.tallies)
        self._tool_specs: list[ToolSpec] = []
        self._warning = WarningLatch(settings.warning_threshold)
        self._governor = CompactionGovernor(resume_below=settings.threshold_trigger)
        self._lock = asyncio.Lock()
        self._update_summarizer_limit()

    # --- budget and usage ------------------------------------------------------------------
    @property
    def max_tokens(self) -> int:
        """The prompt budget in tokens."""
        return self._max_tokens

    @property
    def strategies(self) -> tuple[AnyStrategy, ...]:
        """The strategies in the order they run."""
        return tuple(self._strategies)

    def current_tokens(self, conversation: Conversation) -> int:
        """Prompt tokens now, tool definitions included: the last server report combined with
        the local count (never below the local count after a compaction; see `UsageTracker`).
        Costs O(messages added since the last call)."""
        return self._usage.current(conversation)

    def record_usage(self, prompt_tokens: int | None, conversation: Conversation) -> None:
        """The server reported `prompt_tokens` for the request last sent from `conversation`
        (0 or None: no report, Forge keeps its own count)."""
        self._usage.record(prompt_tokens, conversation)

    def set_tools(self, specs: Sequence[ToolSpec]) -> None:
        """The tool definitions sent with every request, counted into the prompt from now on."""
        if list(specs) == self._tool_specs:
            return
        self._tool_specs = list(specs)
        count_tools = getattr(self.counter, "count_tools", None)
        listed = self._tool_specs  # counted when the prompt is next measured (docs/adr/0042)
        self._usage.count_tools_later(lambda: int(count_tools(listed)) if count_tools else 0)

    @property
    def tool_tokens(self) -> int:
        """Tokens of the tool definitions last given to `set_tools`."""
        return self._usage.tool_tokens

    # --- models ----------------------------------------------------------------------------
    @property
    def summarization_model(self) -> str:
        """The model summaries go to ("" = the main model)."""
        return self._summarization_model

    def set_provider(self, provider: Provider, *, context_window: int | None = None) -> None:
        """Use a new main provider (and its window for the budget, when given). A different
        provider re-arms the summarizer breaker."""
        if provider is not self._provider:
            self.breaker.rearm()
        self._provider = provider
        self._clone = None
        if context_window is not None:
            self._max_tokens = prompt_budget(self.settings, context_window)
            self._context_window = context_window
        self._update_summarizer_limit()

    def set_summarization_model(self, model: str) -> None:
        """Use this model for summaries from now on ("" = the main model). A different model
        re-arms the summarizer breaker."""
        if model.strip() != self._summarization_model:
            self.breaker.rearm()
        self._summarization_model = model.strip()
        self._clone = None
        self._update_summarizer_limit()

    def set_summarization_provider(self, provider: Provider | None) -> None:
        """Summaries go to `provider`'s server (another API or host than the conversation's,
        docs/adr/0037), cloned onto the summarization model; None: the main provider's."""
        if provider is not self._summarization_provider:
            self.breaker.rearm()
        self._summarization_provider = provider
        self._clone = None

    def provider_for_summarization(self) -> Provider:
        """A clone on the summarization model (the main model when none is set), sharing the
        HTTP client, with the summary timeout and retries; the main provider itself when it
        cannot clone. The clone is of the summarization server's provider when one is set."""
        model = self._summarization_model or self._provider.model
        base = self._summarization_provider or self._provider
        if not isinstance(base, ModelCloner):
            return base
        if self._clone is None or self._clone[0] is not base or self._clone[1] != model:
            clone = base.clone_with_model(
                model,
                request_timeout=self.settings.summary_request_timeout,
                max_retries=self.settings.summary_max_retries,
            )
            self._clone = (base, model, clone)
        return self._clone[2]

    def _update_summarizer_limit(self) -> None:
        """Size one summary request: by `summarizer_window` when given; by the main window
        (reported by the server, configured or guessed) when summaries go to the main model;
        else by the summarization model's name."""
        model = self._summarization_model
        if self._summarizer_window:
            window = self._summarizer_window
        elif not model or model == self._provider.model:
            window = self._context_window
        else:
            window = model_context_window(model)
        self.summarizer.single_call_limit = summarizer_input_limit(window)

    # --- the flow --------------------------------------------------------------------------
    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        """Run before every LLM call: warn, run the tiers whose triggers fire, auto-summarize,
        fall back, and never leave the prompt above the budget if anything can shrink."""
        async with self._lock:
            await self.count_ahead(conversation)
            current = self.current_tokens(conversation)
            if self._warning.crossed(current, self.max_tokens):
                threshold = self.settings.warning_threshold
                self._emit(ContextWarning(current, self.max_tokens, threshold))
            ran: set[int] = set()
            for strategy in self._strategies:
                if not self._enabled(strategy):
                    continue
                current = self.current_tokens(conversation)
                if not strategy.should_run(conversation, current, self.max_tokens):
                    continue
                governed = getattr(strategy, "token_triggered", False)
                if governed and not self._governor.allows(current, self.max_tokens):
                    logger.info("context: %s paused (last runs freed too little)", strategy.name)
                    continue
                ran.add(id(strategy))
                if isinstance(strategy, DeterministicStrategy):
                    self._deterministic_run(strategy, conversation, Trigger.AUTO)
                else:
                    await self._run(strategy, conversation, Trigger.AUTO)
                if governed:
                    self._governor.record_run(current, self.current_tokens(conversation))
            await self._auto_summarize(conversation, ran)
            self._fit_budget(conversation)
            self._finish(conversation)

    async def count_ahead(self, conversation: Conversation) -> None:
        """Huge messages are counted off the event loop before anything counts them on it."""
        if isinstance(self.counter, CountsAhead):
            await self.counter.count_ahead(conversation.messages)

    async def compact(
        self, conversation: Conversation, instructions: str = "", trigger: Trigger = Trigger.MANUAL
    ) -> None:
        """Summarize now regardless of triggers (/compact, or after a context overflow).

        After an overflow the prompt must come out smaller than it went in: outputs are cut
        harder (the newest included) and the fallback runs; if nothing could shrink,
        `SummarizationSkipped` is raised rather than letting the same request go out again."""
        async with self._lock:
            await self.count_ahead(conversation)
            before = self.current_tokens(conversation)
            version = conversation.version
            overflow_target = self._overflow_target(conversation)
            if trigger is Trigger.OVERFLOW:
                self._cap_outputs(conversation, overflow_target, trigger)
            chosen: list[AnyStrategy] = [
                s for s in self._strategies if isinstance(s, ThresholdSummarizationStrategy)
            ]
            if not chosen:
                chosen = [s for s in self._strategies if getattr(s, "forceable", False)]
            for strategy in chosen:
                if isinstance(strategy, DeterministicStrategy):
                    self._deterministic_run(strategy, conversation, trigger, force=True)
                    continue
                await self._run(
                    strategy, conversation, trigger, instructions=instructions, force=True
                )
            if trigger is Trigger.OVERFLOW:
                target = self._fallback_target(conversation, trigger)
                if self.current_tokens(conversation) > target:
                    self._fallback_run(conversation, trigger)
                self._fit_budget(conversation, overflow_target, trigger)
            self._finish(conversation)
            if trigger is Trigger.OVERFLOW and (
                conversation.version == version or self.current_tokens(conversation) >= before
            ):
                raise SummarizationSkipped(
                    "nothing could be shrunk: the request still holds "
                    f"{self.current_tokens(conversation):,} tokens against a budget of "
                    f"{self.max_tokens:,}: "
                    + request_breakdown(conversation.messages, self._tool_specs, self.counter)
                )

    def _tool_call_summaries_active(self) -> bool:
        """Whether LLM tool-call summaries take aging groups now (on, and not broken)."""
        return self.settings.tool_call_summaries and self.breaker.allows()

    def _enabled(self, strategy: AnyStrategy) -> bool:
        """Whether the settings switch this tier on."""
        if isinstance(strategy, ObservationMaskingStrategy):
            return self.settings.observation_masking
        if isinstance(strategy, ToolCallSummarizationStrategy):
            return self.settings.tool_call_summaries
        return True

    async def _auto_summarize(self, conversation: Conversation, ran: set[int]) -> None:
        """At the auto-summary threshold: forced runs, then the fallback if still needed."""
        auto = self.settings.auto_summary_threshold
        before = self.current_tokens(conversation)
        if not reached(before, self.max_tokens, auto):
            return
        if not self._governor.allows(before, self.max_tokens):
            logger.info("context: auto-summarization paused (last runs freed too little)")
            return
        for strategy in self._strategies:
            if id(strategy) in ran or not getattr(strategy, "forceable", False):
                continue
            if not self._enabled(strategy):
                continue
            if not reached(self.current_tokens(conversation), self.max_tokens, auto):
                break
            if isinstance(strategy, DeterministicStrategy):
                if strategy.pending_items(conversation, self.max_tokens, force=True):
                    self._deterministic_run(strategy, conversation, Trigger.AUTO, force=True)
                continue
            if isinstance(strategy, SummarizationStrategy) and not strategy.pending_items(
                conversation, force=True
            ):
                continue
            await self._run(strategy, conversation, Trigger.AUTO, force=True)
        if reached(self.current_tokens(conversation), self.max_tokens, auto):
            self._fallback_run(conversation, Trigger.AUTO)
        self._governor.record_run(before, self.current_tokens(conversation))

    def _deterministic_run(
        self,
        strategy: DeterministicStrategy,
        conversation: Conversation,
        trigger: Trigger,
        *,
        force: bool = False,
    ) -> int:
        """One run of a deterministic tier, with the usual events (model "none")."""
        items = strategy.pending_items(conversation, self.max_tokens, force=force)
        if not items:
            return 0
        run_id = new_run_id()
        before = self.current_tokens(conversation)
        self._emit(
            SummarizationStarted(
                run_id, strategy.name, trigger, "none", before, self.max_tokens, items
            )
        )
        started = time.monotonic()
        version = conversation.version
        # An in-place tier's edits are checked, not the whole list (O(edits), ADR 0038).
        was_valid = strategy.in_place or conversation.is_valid()
        done = strategy.apply(conversation, self.max_tokens, force=force)
        changed_shape = not strategy.in_place or not conversation.kept_shape_since(version)
        if changed_shape and was_valid:
            self._ensure_valid(conversation)
        self._emit(
            SummarizationCompleted(
                run_id, strategy.name, "none", done, before, self.current_tokens(conversation),
                time.monotonic() - started, 0,
            )
        )  # fmt: skip
        return done

    # --- never above the budget ------------------------------------------------------------
    def _overflow_target(self, conversation: Conversation) -> int:
        """What the prompt must shrink to after the server refused it as too long."""
        return min(
            int(self.max_tokens * FALLBACK_TARGET_FACTOR),
            int(self.current_tokens(conversation) * OVERFLOW_TARGET_FACTOR),
        )

    def _fit_budget(
        self, conversation: Conversation, limit: int | None = None, trigger: Trigger = Trigger.AUTO
    ) -> None:
        """The last step before a request: if the prompt is still above `limit` (default the
        budget), run the fallback, then cut tool outputs harder, the newest included."""
        limit = self.max_tokens if limit is None else limit
        if self.current_tokens(conversation) <= limit:
            return
        self._fallback_run(conversation, trigger)
        if self.current_tokens(conversation) > limit:
            self._cap_outputs(conversation, limit, trigger)
        if self.current_tokens(conversation) > limit:
            cut_old_instructions(
                conversation,
                limit,
                max_tokens=self.max_tokens,
                counter=self.counter,
                current=self.current_tokens,
            )
        if self.current_tokens(conversation) > limit:
            logger.warning(
                "context: the request stays above the budget (%d of %d tokens): %s",
                self.current_tokens(conversation),
                limit,
                request_breakdown(conversation.messages, self._tool_specs, self.counter),
            )

    def _cap_outputs(self, conversation: Conversation, limit: int, trigger: Trigger) -> None:
        """Cut tool outputs (newest included) with a shrinking per-output cap until the prompt
        fits `limit` or no output can be cut further."""
        cap = next((s for s in self._strategies if isinstance(s, IngestCapStrategy)), None)
        if cap is None:
            cap = IngestCapStrategy(self.settings, self.counter)
        excess = self.current_tokens(conversation) - limit
        if excess <= 0:
            return
        run_id = new_run_id()
        before = self.current_tokens(conversation)
        self._emit(
            SummarizationStarted(run_id, cap.name, trigger, "none", before, self.max_tokens, 0)
        )
        started = time.monotonic()
        total = cap_outputs_until(
            conversation,
            limit,
            cap,
            max_tokens=self.max_tokens,
            excluded_tools=self.settings.excluded_tools,
            current=self.current_tokens,
        )
        self._emit(
            SummarizationCompleted(
                run_id, cap.name, "none", total, before, self.current_tokens(conversation),
                time.monotonic() - started, 0,
            )
        )  # fmt: skip

    async def _run(
        self,
        strategy: Strategy,
        conversation: Conversation,
        trigger: Trigger,
        *,
        instructions: str = "",
        force: bool = False,
    ) -> bool:
        """One strategy run with its events; on failure, the fallback when room is needed.
        While the summarizer breaker is open a strategy using the LLM does not start: the
        fallback runs instead when room is needed, and nothing happens otherwise."""
        if getattr(strategy, "uses_llm", True) and not self.breaker.allows():
            logger.info("context: %s not run: %s", strategy.name, self.breaker.why_not())
            if trigger is not Trigger.AUTO or reached(
                self.current_tokens(conversation),
                self.max_tokens,
                self.settings.auto_summary_threshold,
            ):
                self._fallback_run(conversation, trigger)
            return False
        try:
            return await self._run_strategy(
                strategy, conversation, trigger, instructions=instructions, force=force
            )
        finally:
            notice = self.breaker.take_notice()
            if notice is not None:
                self._emit(notice)

    async def _run_strategy(
        self,
        strategy: Strategy,
        conversation: Conversation,
        trigger: Trigger,
        *,
        instructions: str,
        force: bool,
    ) -> bool:
        run_id = new_run_id()
        provider = CountingProvider(self.provider_for_summarization(), self.usage_sink)
        before = self.current_tokens(conversation)
        items = 0
        if isinstance(strategy, SummarizationStrategy):
            items = strategy.pending_items(conversation, force=force)
        logger.info(
            "context: %s run %s (%s) uses model %s", strategy.name, run_id, trigger, provider.model
        )
        self._emit(
            SummarizationStarted(
                run_id, strategy.name, trigger, provider.model, before, self.max_tokens, items
            )
        )
        started = time.monotonic()
        was_valid = conversation.is_valid()
        error: BaseException | None = None
        applied = done = 0
        try:
            if isinstance(strategy, SummarizationStrategy):
                run = StrategyRun(run_id, trigger, self._emit, instructions, force)
                done = await strategy.run(conversation, provider, run)
            else:
                done = await strategy.summarize(conversation, provider, self._emit)
        except PartialSummarizationError as partial:
            error, applied = partial.first_error, partial.applied
        except (LLMError, SummarizationError) as failure:
            error = failure
        finally:
            if was_valid:
                self._ensure_valid(conversation)
        if error is None:
            after = self.current_tokens(conversation)
            duration = time.monotonic() - started
            self._emit(
                SummarizationCompleted(
                    run_id, strategy.name, provider.model, done, before, after, duration,
                    provider.calls,
                )
            )  # fmt: skip
            return True
        fallback: str | None = None
        current = self.current_tokens(conversation)
        needs_room = trigger is not Trigger.AUTO or reached(
            current, self.max_tokens, self.settings.auto_summary_threshold
        )
        if needs_room:
            fallback = self._fallback(conversation, trigger).describe()
        text = _describe_error(error)
        logger.warning("context: %s run %s failed: %s", strategy.name, run_id, text)
        self._emit(
            SummarizationFailed(
                run_id, strategy.name, provider.model, text, fallback, applied, before,
                self.current_tokens(conversation),
            )
        )  # fmt: skip
        return False

    # --- the fallback ----------------------------------------------------------------------
    def _fallback_target(self, conversation: Conversation, trigger: Trigger) -> int:
        settings = self.settings
        share = min(settings.threshold_trigger, settings.auto_summary_threshold)
        target = int(share * self.max_tokens * FALLBACK_TARGET_FACTOR)
        if trigger is Trigger.OVERFLOW:
            target = min(target, int(self.current_tokens(conversation) * OVERFLOW_TARGET_FACTOR))
        return target

    def _fallback(self, conversation: Conversation, trigger: Trigger) -> FallbackResult:
        """The deterministic ladder, aiming below the triggers (no LLM call)."""
        overhead = self.current_tokens(conversation) - self._usage.local_tokens(conversation)
        was_valid = conversation.is_valid()
        result = apply_fallback_ladder(
            conversation,
            self.counter,
            target_tokens=self._fallback_target(conversation, trigger) - overhead,
            excluded_tools=set(self.settings.excluded_tools),
            keep_recent=self.settings.messages_old_threshold,
        )
        if was_valid:
            self._ensure_valid(conversation)
        logger.info("context: fallback (%s): %s", trigger, result.describe() or "nothing to do")
        return result

    def _fallback_run(self, conversation: Conversation, trigger: Trigger) -> None:
        """The fallback as a run of its own, with events (model "none": no LLM call)."""
        run_id = new_run_id()
        before = self.current_tokens(conversation)
        self._emit(
            SummarizationStarted(
                run_id, FALLBACK_STRATEGY, trigger, "none", before, self.max_tokens, 0
            )
        )
        started = time.monotonic()
        result = self._fallback(conversation, trigger)
        self._emit(
            SummarizationCompleted(
                run_id, FALLBACK_STRATEGY, "none",
                result.tool_outputs_pruned + result.messages_dropped,
                before, self.current_tokens(conversation), time.monotonic() - started, 0,
            )
        )  # fmt: skip

    # --- helpers ---------------------------------------------------------------------------
    def _finish(self, conversation: Conversation) -> None:
        current = self.current_tokens(conversation)
        self._warning.update(current, self.max_tokens)
        self._usage.mark_sent(conversation)
        self._emit(ContextUsage(current, self.max_tokens))

    def _ensure_valid(self, conversation: Conversation) -> None:
        """Last line of defence for invariant 1: repair (and log) a list a run left invalid.
        Called only when the list was valid before, so a call still awaiting its result (the
        caller's business) is never given a made-up one."""
        problems = conversation.problems()
        if problems:
            logger.error("context: repairing an invalid conversation: %s", "; ".join(problems[:3]))
            conversation.replace_range(0, len(conversation), repair(conversation.messages))

    def _emit(self, event: ContextEvent) -> None:
        if self.event_sink is not None:
            self.event_sink(event)


def _describe_error(error: BaseException) -> str:
    if isinstance(error, SummarizationSkipped):
        return f"skipped: {error}"
    return f"{type(error).__name__}: {error}"
