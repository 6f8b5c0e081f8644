"""The prices the replay benchmark costs sessions with: the app's own table.

Prices come from `forge.config.prices.DEFAULT_PRICES` (US dollars per million tokens, the
table Forge's status pane and `/cost` use too; change them there only). The main model answers
the agent's requests; the summarization model answers every summary request, whatever the
policy.
"""

from __future__ import annotations

from forge.config.prices import DEFAULT_PRICES, PER_MILLION, ModelPrice

__all__ = ["MAIN", "PER_MILLION", "SUMMARIZATION", "ModelPrice", "session_cost"]

MAIN = DEFAULT_PRICES["gpt-4o"]
"""The agent's model."""
SUMMARIZATION = DEFAULT_PRICES["gpt-4o-mini"]
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
