"""The context manager: budget, warnings, strategies, auto-summarization and the fallback.

`evaluate_and_summarize` runs before every LLM call:
1. warn once when usage crosses `warning_threshold`;
2. run each strategy whose own trigger fires, in order, then at `auto_summary_threshold` the
   forceable ones that did not run yet and the fallback ladder (`forge.context.auto_summary`);
3. never leave the prompt above the budget if anything can shrink (`forge.context.fitting`);
4. report the usage the next request will have.

Each strategy keeps one contract (`forge.context.strategies.contract`) and is run, with its
events and the fallback on failure, by `forge.context.runner.StrategyRunner` (docs/adr/0039).
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
from collections.abc import Sequence
from pathlib import Path

from forge.config.settings import ContextSettings
from forge.context.adaptive import AdaptiveSummarizer
from forge.context.auto_summary import auto_summarize, compaction_strategies, run_triggered
from forge.context.budget import CompactionGovernor, UsageTracker, WarningLatch, prompt_budget
from forge.context.cache_pricing import CachePricing
from forge.context.conversation import Conversation
from forge.context.count_ahead import CountAhead
from forge.context.counting_provider import UsageSink
from forge.context.errors import SummarizationSkipped
from forge.context.events import (
    ContextEvent,
    ContextUsage,
    ContextWarning,
    EventSink,
    Trigger,
    drop_event,
)
from forge.context.fitting import cap_outputs, fit_budget, overflow_target
from forge.context.ledger_pin import Compaction, LedgerPin, compaction_since
from forge.context.oversize_message import ShortenedMessage, shortened_user_message
from forge.context.request_breakdown import request_breakdown
from forge.context.runner import StrategyRunner
from forge.context.strategies import ContextStrategy, StrategyServices
from forge.context.strategies.defaults import default_strategies
from forge.context.summarizer_breaker import SummarizerBreaker
from forge.context.summary_archive import SummaryArchive
from forge.context.tally import Tallies
from forge.context.usage_estimate import estimated_usage
from forge.llm.messages import Message
from forge.llm.model_info import context_window as model_context_window
from forge.llm.model_info import default_reply_headroom
from forge.llm.protocols import ModelCloner, Provider, TokenCounter, ToolSpec
from forge.llm.stream import Usage

logger = logging.getLogger("forge.context")

SUMMARIZER_PROMPT_RESERVE = 1024
"""Tokens of a summarization request taken by instructions and the prior summary."""


def summarizer_input_limit(window: int) -> int:
    """The most input tokens one summarization request may carry in a window of `window`."""
    return max(256, window - default_reply_headroom(window) - SUMMARIZER_PROMPT_RESERVE)


class Manager:
    """Implements `ContextManagerProtocol`: keeps the conversation within the prompt budget.

    The budget is `settings.max_tokens`, else `context_window` minus the reply headroom.
    `summarization_model` ("" = the main model) picks the model summaries go to;
    `summarizer_window` overrides that model's context window (else looked up by name).
    `summary_dir`, when given, receives one markdown file per summary. `strategies` replaces
    the default tiers (`default_strategies`). `breaker` replaces the default
    `SummarizerBreaker` (tests pass one with their own clock). Every context event goes to
    `emit` (which must not block; the agent's forwards it to the running turn), the model and
    usage of every summarization request to `usage_sink` (the cost ledger).
    """

    def __init__(
        self,
        settings: ContextSettings,
        provider: Provider,
        counter: TokenCounter,
        *,
        context_window: int,
        summarization_model: str = "",
        emit: EventSink = drop_event,
        usage_sink: UsageSink | None = None,
        summary_dir: Path | None = None,
        strategies: Sequence[ContextStrategy] | None = None,
        summarizer_window: int | None = None,
        breaker: SummarizerBreaker | None = None,
    ) -> None:
        self.settings = settings
        self.counter = counter
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
        self._strategies: list[ContextStrategy] = (
            list(strategies) if strategies is not None else default_strategies(self.services)
        )
        self._usage = UsageTracker(counter, self.tallies)
        self.runner = StrategyRunner(
            settings, counter, self._usage, self.breaker, emit=emit, usage_sink=usage_sink,
            budget=lambda: self._max_tokens,
            summarization_provider=self.provider_for_summarization,
        )  # fmt: skip
        self._tool_specs: list[ToolSpec] = []
        self._warning = WarningLatch(settings.warning_threshold)
        self._governor = CompactionGovernor(resume_below=settings.threshold_trigger)
        self._lock = asyncio.Lock()
        self._count_ahead = CountAhead()
        self.ledger_pin = LedgerPin()
        """The work ledger of the conversation this manager keeps (docs/adr/0050)."""
        self._update_summarizer_limit()

    # --- budget and usage ------------------------------------------------------------------
    @property
    def max_tokens(self) -> int:
        """The prompt budget in tokens."""
        return self._max_tokens

    @property
    def strategies(self) -> tuple[ContextStrategy, ...]:
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

    def estimated_usage(self, conversation: Conversation, reply: Message) -> Usage:
        """Forge's own count of the request just made from `conversation` (tools included)
        and its `reply`, for a server that reported no usage (issue 34)."""
        return estimated_usage(self.counter, self.current_tokens(conversation), reply)

    def fit_user_message(self, message: Message) -> ShortenedMessage | None:
        """The head-and-tail replacement of a user message above its share of the budget
        (`context.user_instruction_share`), or None when it fits (issue 34)."""
        share = int(self.settings.user_instruction_share * self.max_tokens)
        return shortened_user_message(message, share, self.counter)

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

    def set_cache_pricing(self, pricing: CachePricing) -> None:
        """The main model's prompt-cache prices (from the price table): masking then waits
        until a rewrite of the prompt's prefix pays (`forge.context.cache_pricing`)."""
        self.services.cache_pricing = pricing

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
            runner, governor = self.runner, self._governor
            version = conversation.version
            self.ledger_pin.observe(conversation)  # before any tier folds a call away
            ran = await run_triggered(runner, self._strategies, conversation, governor)
            await auto_summarize(runner, self._strategies, conversation, governor, ran)
            self._fit_with_ledger(conversation, version)
            self._finish(conversation)

    async def count_ahead(self, conversation: Conversation) -> None:
        """Huge messages are counted off the event loop before anything counts them on it
        (the messages new since the last call: `forge.context.count_ahead`)."""
        await self._count_ahead.count(self.counter, conversation)

    async def compact(
        self, conversation: Conversation, instructions: str = "", trigger: Trigger = Trigger.MANUAL
    ) -> None:
        """Summarize now regardless of triggers (/compact, or after a context overflow).

        After an overflow the prompt must come out smaller than it went in: outputs are cut
        harder (the newest included) and the fallback runs; if nothing could shrink,
        `SummarizationSkipped` is raised rather than letting the same request go out again."""
        async with self._lock:
            await self.count_ahead(conversation)
            runner = self.runner
            before = self.current_tokens(conversation)
            version = conversation.version
            self.ledger_pin.observe(conversation)
            target = overflow_target(runner, conversation)
            overflow = trigger is Trigger.OVERFLOW
            if overflow:
                cap_outputs(runner, conversation, self._strategies, target, trigger)
            for strategy in compaction_strategies(self._strategies):
                await runner.run(
                    strategy, conversation, trigger, instructions=instructions, force=True
                )
            if overflow:
                if runner.current(conversation) > runner.fallback_target(conversation, trigger):
                    runner.run_fallback(conversation, trigger)
                fit_budget(
                    runner, conversation, self._strategies, self._tool_specs,
                    limit=target, trigger=trigger,
                )  # fmt: skip
            if not overflow:  # after an overflow the prompt must only shrink
                self._pin_ledger(conversation, version)
            self._finish(conversation)
            if overflow and (
                conversation.version == version or self.current_tokens(conversation) >= before
            ):
                raise SummarizationSkipped(
                    "nothing could be shrunk: the request still holds "
                    f"{self.current_tokens(conversation):,} tokens against a budget of "
                    f"{self.max_tokens:,}: "
                    + request_breakdown(conversation.messages, self._tool_specs, self.counter)
                )

    def _fit_with_ledger(self, conversation: Conversation, version: int) -> None:
        """Pin the ledger if a tier compacted, then fit the budget; pin again (and fit) if
        only the fit compacted."""
        pinned = self._pin_ledger(conversation, version)
        fitted_from = conversation.version
        fit_budget(self.runner, conversation, self._strategies, self._tool_specs)
        if not pinned and self._pin_ledger(conversation, fitted_from):
            fit_budget(self.runner, conversation, self._strategies, self._tool_specs)

    def _pin_ledger(self, conversation: Conversation, version: int) -> bool:
        """Rewrite the pinned work ledger if a compaction ran since `version` (the prefix is
        rewritten anyway); first pinned by one that moves messages (`forge.context.ledger_pin`)."""
        if not self.settings.work_ledger:
            return False
        compaction = compaction_since(conversation, version)
        if compaction is Compaction.NONE:
            return False
        return self.ledger_pin.pin(
            conversation,
            self.max_tokens,
            self.counter.count_text,
            insert=compaction is Compaction.MOVED,
        )

    def ledger_text(self) -> str:
        """The work ledger as the prompt shows it once pinned ("" while empty): `/context`
        and a subagent's brief."""
        return self.ledger_pin.text(self.max_tokens, self.counter.count_text)

    def _finish(self, conversation: Conversation) -> None:
        current = self.current_tokens(conversation)
        self._warning.update(current, self.max_tokens)
        self._usage.mark_sent(conversation)
        self.services.sent = (id(conversation), conversation.version)
        self._emit(ContextUsage(current, self.max_tokens))

    def _emit(self, event: ContextEvent) -> None:
        self.runner.emit(event)
