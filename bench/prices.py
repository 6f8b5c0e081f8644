"""The price table the replay benchmark costs sessions with, in one place.

Prices are US dollars per million tokens, OpenAI's published list prices for the two models the
replay assumes (checked 2026-11; change them here only). The main model answers the agent's
requests; the summarization model answers every summary request, whatever the policy.
"""

from __future__ import annotations

from dataclasses import dataclass

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class ModelPrice:
    """What one model charges, in dollars per million tokens."""

    model: str
    input: float
    cached_input: float
    output: float

    def cost(self, uncached: int, cached: int, output: int) -> float:
        """Dollars for `uncached` + `cached` prompt tokens and `output` completion tokens."""
        return (
            uncached * self.input + cached * self.cached_input + output * self.output
        ) / PER_MILLION


MAIN = ModelPrice("gpt-4o", input=2.50, cached_input=1.25, output=10.00)
"""The agent's model."""
SUMMARIZATION = ModelPrice("gpt-4o-mini", input=0.15, cached_input=0.075, output=0.60)
"""The summarization model (summary requests are costed uncached)."""


def session_cost(
    *,
    uncached_prompt: int,
    cached_prompt: int,
    agent_output: int,
    summary_input: int,
    summary_output: int,
    main: ModelPrice = MAIN,
    summarization: ModelPrice = SUMMARIZATION,
) -> float:
    """A session's dollars: the agent's requests at `main`'s prices (cached part at the cached
    price), plus every summary request at `summarization`'s prices, uncached."""
    return main.cost(uncached_prompt, cached_prompt, agent_output) + summarization.cost(
        summary_input, 0, summary_output
    )
