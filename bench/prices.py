"""The prices the replay benchmark costs sessions with: the app's own table.

Prices come from `forge.config.prices.DEFAULT_PRICES` (US dollars per million tokens, the
table Forge's status pane and `/cost` use too; change them there only). The main model answers
the agent's requests; the summarization model answers every summary request, whatever the
policy.
"""

from __future__ import annotations

from forge.config.prices import DEFAULT_PRICES, PER_MILLION, ModelPrice

__all__ = [
    "ANTHROPIC_MAIN",
    "ANTHROPIC_SUMMARIZATION",
    "MAIN",
    "PER_MILLION",
    "SUMMARIZATION",
    "ModelPrice",
    "anthropic_cost",
    "session_cost",
]

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


ANTHROPIC_MAIN = ModelPrice("claude-sonnet-4-5", input=3.0, cached_input=0.3, output=15.0)
"""The agent's model under the Anthropic-style price model (base prices; `cached_input` is the
cache-read price, 0.1 x input)."""
ANTHROPIC_SUMMARIZATION = ModelPrice("claude-haiku-4-5", input=1.0, cached_input=0.1, output=5.0)
"""The summarization model under the Anthropic-style price model (summaries uncached)."""
CACHE_WRITE_MULTIPLIER = 1.25
"""A cache write costs this many times the input price (Anthropic, 5-minute cache)."""


def anthropic_cost(
    *,
    read: int,
    written: int,
    uncached: int,
    agent_output: int,
    summary_input: int,
    summary_output: int,
    main: ModelPrice = ANTHROPIC_MAIN,
    summarization: ModelPrice = ANTHROPIC_SUMMARIZATION,
) -> float:
    """A session's dollars under explicit breakpoints: reads at the cached price, writes at
    1.25 x input, the rest at input, plus summaries (uncached) at `summarization`'s prices."""
    prompt = (
        uncached * main.input
        + written * main.input * CACHE_WRITE_MULTIPLIER
        + read * main.cached_input
    ) / PER_MILLION
    return (
        prompt
        + main.cost(0, 0, agent_output)
        + summarization.cost(summary_input, 0, summary_output)
    )
