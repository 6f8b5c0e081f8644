"""Recall-adjusted cost: one re-fetch request per lost referenced output, under both models."""

from __future__ import annotations

from bench.costing import CostMeter
from bench.prices import ANTHROPIC_MAIN, MAIN, PER_MILLION

TOOLS = tuple([1] * 1500)
MESSAGE = tuple([2] * 600)
OUTPUT = tuple([3] * 200)
PRIMING = (-12, -13, -14)


def test_a_lost_output_adds_one_request_of_the_context_plus_that_output() -> None:
    meter = CostMeter()
    hit = meter.request([TOOLS, MESSAGE, PRIMING], False, [OUTPUT])
    assert hit == 0
    assert meter.recall_requests == 1
    # OpenAI-style: the re-fetch shares the 2,100-token context with the request just sent.
    assert (meter.recall.openai_cached, meter.recall.openai_uncached) == (2048, 2303 - 2048)
    # Anthropic-style: reads what the request just wrote, writes the output.
    recall = meter.recall
    assert (recall.anthropic_read, recall.anthropic_written, recall.anthropic_uncached) == (
        2100,
        200,
        3,
    )
    costs = meter.costs(agent_output=0, summary_input=0, summary_output=0)
    openai_extra = (255 * MAIN.input + 2048 * MAIN.cached_input) / PER_MILLION
    assert abs(costs["recall_cost_usd_openai"] - costs["cost_usd_openai"] - openai_extra) < 1e-12
    anthropic_extra = (
        2100 * ANTHROPIC_MAIN.cached_input + 200 * ANTHROPIC_MAIN.input * 1.25 + 3 * 3.0
    ) / PER_MILLION
    assert (
        abs(costs["recall_cost_usd_anthropic"] - costs["cost_usd_anthropic"] - anthropic_extra)
        < 1e-12
    )


def test_the_re_fetch_does_not_change_what_later_requests_pay() -> None:
    with_recall, without = CostMeter(), CostMeter()
    with_recall.request([TOOLS, MESSAGE, PRIMING], False, [OUTPUT])
    without.request([TOOLS, MESSAGE, PRIMING], False)
    later = [TOOLS, MESSAGE, tuple([4] * 50), PRIMING]
    with_recall.request(later, False)
    without.request(later, False)
    assert with_recall.agent == without.agent
    assert without.recall_requests == 0
    costs = without.costs(100, 10, 5)
    assert costs["recall_cost_usd_openai"] == costs["cost_usd_openai"]
    assert costs["recall_cost_usd_anthropic"] == costs["cost_usd_anthropic"]
