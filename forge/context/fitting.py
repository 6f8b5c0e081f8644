"""Never above the budget: the last step before a request, and the shrink after an overflow.

If the prompt is still above its limit once the strategies ran, the fallback ladder runs, then
tool outputs are cut harder (the newest included), then the middle of old instructions
(`forge.context.last_resort`); each step reports as a run with model "none".
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from forge.context.conversation import Conversation
from forge.context.events import Trigger
from forge.context.last_resort import cap_outputs_until, cut_old_instructions
from forge.context.request_breakdown import request_breakdown
from forge.context.runner import FALLBACK_TARGET_FACTOR, OVERFLOW_TARGET_FACTOR, StrategyRunner
from forge.context.strategies.contract import ContextStrategy
from forge.context.strategies.ingest_cap import IngestCapStrategy
from forge.llm.protocols import ToolSpec

logger = logging.getLogger("forge.context")


def ingest_cap(runner: StrategyRunner, strategies: Sequence[ContextStrategy]) -> IngestCapStrategy:
    """The ingest cap among the tiers (its cursor learns of the cuts), else a new one."""
    for strategy in strategies:
        if isinstance(strategy, IngestCapStrategy):
            return strategy
    return IngestCapStrategy(runner.settings, runner.counter)


def overflow_target(runner: StrategyRunner, conversation: Conversation) -> int:
    """What the prompt must shrink to after the server refused it as too long."""
    return min(
        int(runner.max_tokens * FALLBACK_TARGET_FACTOR),
        int(runner.current(conversation) * OVERFLOW_TARGET_FACTOR),
    )


def fit_budget(
    runner: StrategyRunner,
    conversation: Conversation,
    strategies: Sequence[ContextStrategy],
    tool_specs: Sequence[ToolSpec],
    *,
    limit: int | None = None,
    trigger: Trigger = Trigger.AUTO,
) -> None:
    """If the prompt is above `limit` (default the budget), run the fallback, then cut tool
    outputs harder with the ingest cap of `strategies`, the newest included, then old
    instructions."""
    limit = runner.max_tokens if limit is None else limit
    if runner.current(conversation) <= limit:
        return
    runner.run_fallback(conversation, trigger)
    if runner.current(conversation) > limit:
        cap_outputs(runner, conversation, strategies, limit, trigger)
    if runner.current(conversation) > limit:
        cut_old_instructions(
            conversation,
            limit,
            max_tokens=runner.max_tokens,
            counter=runner.counter,
            current=runner.current,
        )
    if runner.current(conversation) > limit:
        logger.warning(
            "context: the request stays above the budget (%d of %d tokens): %s",
            runner.current(conversation),
            limit,
            request_breakdown(conversation.messages, tool_specs, runner.counter),
        )


def cap_outputs(
    runner: StrategyRunner,
    conversation: Conversation,
    strategies: Sequence[ContextStrategy],
    limit: int,
    trigger: Trigger,
) -> None:
    """Cut tool outputs (newest included) with a shrinking per-output cap until the prompt
    fits `limit` or no output can be cut further."""
    if runner.current(conversation) <= limit:
        return
    cap = ingest_cap(runner, strategies)

    def step() -> int:
        return cap_outputs_until(
            conversation,
            limit,
            cap,
            max_tokens=runner.max_tokens,
            excluded_tools=runner.settings.excluded_tools,
            current=runner.current,
        )

    runner.run_step(cap.name, conversation, trigger, step)
