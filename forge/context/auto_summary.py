"""The strategy passes of one evaluation before an LLM call (`Manager.evaluate_and_summarize`).

1. Each enabled strategy whose own trigger fires runs, in order; a token-triggered one obeys
   the no-loop governor (`CompactionGovernor`: runs that freed too little pause it).
2. At `auto_summary_threshold`, the forceable strategies that did not run yet run regardless of
   their triggers (while anything is pending and usage stays at the threshold), then the
   fallback ladder if usage is still there.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from forge.context.budget import CompactionGovernor, reached
from forge.context.conversation import Conversation
from forge.context.events import Trigger
from forge.context.runner import StrategyRunner
from forge.context.strategies.contract import ContextStrategy

logger = logging.getLogger("forge.context")


async def run_triggered(
    runner: StrategyRunner,
    strategies: Sequence[ContextStrategy],
    conversation: Conversation,
    governor: CompactionGovernor,
) -> set[int]:
    """Run every enabled strategy whose trigger fires; the ids of those that ran."""
    ran: set[int] = set()
    for strategy in strategies:
        if not strategy.enabled():
            continue
        current = runner.current(conversation)
        if not strategy.should_run(conversation, current, runner.max_tokens):
            continue
        governed = strategy.capabilities.token_triggered
        if governed and not governor.allows(current, runner.max_tokens):
            logger.info("context: %s paused (last runs freed too little)", strategy.name)
            continue
        ran.add(id(strategy))
        await runner.run(strategy, conversation, Trigger.AUTO)
        if governed:
            governor.record_run(current, runner.current(conversation))
    return ran


async def auto_summarize(
    runner: StrategyRunner,
    strategies: Sequence[ContextStrategy],
    conversation: Conversation,
    governor: CompactionGovernor,
    ran: set[int],
) -> None:
    """At the auto-summary threshold: forced runs of the forceable strategies not in `ran`,
    then the fallback if still needed."""
    auto = runner.settings.auto_summary_threshold
    before = runner.current(conversation)
    if not reached(before, runner.max_tokens, auto):
        return
    if not governor.allows(before, runner.max_tokens):
        logger.info("context: auto-summarization paused (last runs freed too little)")
        return
    for strategy in strategies:
        if id(strategy) in ran or not strategy.capabilities.forceable or not strategy.enabled():
            continue
        if not reached(runner.current(conversation), runner.max_tokens, auto):
            break
        if not strategy.pending_items(conversation, runner.max_tokens, force=True):
            continue
        await runner.run(strategy, conversation, Trigger.AUTO, force=True)
    if reached(runner.current(conversation), runner.max_tokens, auto):
        runner.run_fallback(conversation, Trigger.AUTO)
    governor.record_run(before, runner.current(conversation))


def compaction_strategies(strategies: Sequence[ContextStrategy]) -> list[ContextStrategy]:
    """What /compact and an overflow run (forced): the strategies that `compacts`, else the
    forceable ones."""
    chosen = [s for s in strategies if s.capabilities.compacts]
    return chosen or [s for s in strategies if s.capabilities.forceable]
