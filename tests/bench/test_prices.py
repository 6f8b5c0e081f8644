"""The cost arithmetic of the replay."""

from __future__ import annotations

import pytest

from bench.prices import MAIN, SUMMARIZATION, ModelPrice, session_cost


def test_a_model_charges_uncached_cached_and_output_per_million() -> None:
    price = ModelPrice("m", input=2.0, cached_input=1.0, output=8.0)
    assert price.cost(1_000_000, 0, 0) == pytest.approx(2.0)
    assert price.cost(500_000, 1_000_000, 250_000) == pytest.approx(1.0 + 1.0 + 2.0)


def test_a_session_adds_the_agent_at_main_prices_and_summaries_uncached_at_theirs() -> None:
    cost = session_cost(
        uncached_prompt=400_000,
        cached_prompt=600_000,
        agent_output=10_000,
        summary_input=200_000,
        summary_output=20_000,
    )
    agent = (400_000 * MAIN.input + 600_000 * MAIN.cached_input + 10_000 * MAIN.output) / 1e6
    summaries = (200_000 * SUMMARIZATION.input + 20_000 * SUMMARIZATION.output) / 1e6
    assert cost == pytest.approx(agent + summaries)
    assert MAIN.cached_input < MAIN.input
    assert SUMMARIZATION.input < MAIN.input
