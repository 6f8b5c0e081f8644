"""bench/sweep.py's own pieces: a constant set for one variant and put back, and the sums
per group (shared, corpus, all; the combined session left out)."""

from __future__ import annotations

import dataclasses
from typing import Any

from bench import sweep
from bench.replay import Row
from forge.context.strategies import masking


def row(session: str, origin: str, **values: Any) -> Row:
    """A replay row with zeros everywhere but `values`."""
    defaults: dict[str, Any] = {}
    for field in dataclasses.fields(Row):
        if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            defaults[field.name] = "" if field.type in ("str", str) else 0
    defaults.update(session=session, origin=origin, **values)
    return Row(**defaults)


def test_a_constant_is_set_for_the_variant_and_put_back() -> None:
    before = masking.MINIMUM_SAVING_TOKENS
    with sweep.constant("forge.context.strategies.masking:MINIMUM_SAVING_TOKENS", 7):
        assert masking.MINIMUM_SAVING_TOKENS == 7
    assert before == masking.MINIMUM_SAVING_TOKENS


def test_sums_per_part_of_the_split_leave_the_combined_session_out() -> None:
    rows = [
        row("a", "shared", recall_cost_usd_openai=1.0, referenced_lost=1, referenced_outputs=4),
        row(
            "aider__chat-history-343", "bench/corpus", recall_cost_usd_openai=2.0, referenced_lost=2
        ),
        row("combined", "combined", recall_cost_usd_openai=100.0, referenced_lost=50),
    ]
    totals = sweep.summary(rows)
    assert totals["tuning"]["recall_cost_usd_openai"] == 1.0
    assert totals["held-back"]["recall_cost_usd_openai"] == 2.0
    assert totals["all"]["recall_cost_usd_openai"] == 3.0
    assert totals["all"]["referenced_lost"] == 3
    variable = sweep.VARIABLES[0]
    text = sweep.table(variable, [(variable.default, rows)])
    assert f"| {variable.default} (default) | all | 3.0000 |" in text


def test_the_anthropic_style_dollars_come_from_the_forge_told_anthropic_prices() -> None:
    rows = [
        row(
            "a", "shared", policy="forge", recall_cost_usd_openai=1.0, recall_cost_usd_anthropic=5.0
        ),
        row(
            "a",
            "shared",
            policy="forge@anthropic",
            recall_cost_usd_openai=9.0,
            recall_cost_usd_anthropic=2.0,
            referenced_lost=7,
        ),
    ]
    totals = sweep.summary(rows)["all"]
    assert totals["recall_cost_usd_openai"] == 1.0
    assert totals["recall_cost_usd_anthropic"] == 2.0
    assert totals["referenced_lost"] == 0  # the OpenAI-style run's
