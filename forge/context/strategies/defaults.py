"""The built-in tiers in the order the manager runs them, cheapest first."""

from __future__ import annotations

from forge.context.strategies.base import StrategyServices
from forge.context.strategies.contract import ContextStrategy
from forge.context.strategies.goal_batch import GoalBatchCompactionStrategy
from forge.context.strategies.image_masking import ImageMaskingStrategy
from forge.context.strategies.ingest_cap import IngestCapStrategy
from forge.context.strategies.instructions import InstructionCondensationStrategy
from forge.context.strategies.masking import ObservationMaskingStrategy
from forge.context.strategies.threshold import ThresholdSummarizationStrategy
from forge.context.strategies.tool_call import ToolCallSummarizationStrategy


def default_strategies(services: StrategyServices) -> list[ContextStrategy]:
    """The tiers, cheapest first: ingest cap -> observation masking -> image masking ->
    tool-call summaries -> instruction condensation -> threshold summaries -> goal batches,
    sharing `services`."""
    settings, counter = services.settings, services.counter
    breaker = services.summarizer.breaker

    def tool_call_summaries_active() -> bool:
        # Aging groups go to the LLM tier while it is on and working; else to masking.
        return settings.tool_call_summaries and breaker.allows()

    return [
        IngestCapStrategy(settings, counter),
        ObservationMaskingStrategy(
            settings,
            counter,
            summaries_active=tool_call_summaries_active,
            cache_pricing=lambda: services.cache_pricing,
            last_sent=lambda: services.sent,
        ),
        ImageMaskingStrategy(settings, counter),  # old user images (docs/adr/0055, part 2)
        ToolCallSummarizationStrategy(services),
        InstructionCondensationStrategy(services),
        ThresholdSummarizationStrategy(services),
        GoalBatchCompactionStrategy(services),
    ]
