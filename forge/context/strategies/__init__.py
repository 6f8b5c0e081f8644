"""The context strategies: the one contract (`contract`) and the built-in summarizing ones, in
the order the manager runs them: tool calls, threshold, goal batches."""

from __future__ import annotations

from forge.context.strategies.base import StrategyServices, SummarizationStrategy
from forge.context.strategies.contract import Capabilities, ContextStrategy, StrategyRun
from forge.context.strategies.goal_batch import GoalBatchCompactionStrategy
from forge.context.strategies.threshold import ThresholdSummarizationStrategy
from forge.context.strategies.tool_call import ToolCallSummarizationStrategy

__all__ = [
    "Capabilities",
    "ContextStrategy",
    "GoalBatchCompactionStrategy",
    "StrategyRun",
    "StrategyServices",
    "SummarizationStrategy",
    "ThresholdSummarizationStrategy",
    "ToolCallSummarizationStrategy",
]
