"""Issue 23's targets table (`bench.replay_targets`): cheapest other policy at 0 over budget,
the Anthropic-style twin of a forge policy, loss against masking-10 and masking-10 held to the
budget."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from bench.replay import Row
from bench.replay_targets import anthropic_twin, target_rows


def row(session: str, policy: str, **values: Any) -> Row:
    defaults: dict[str, Any] = {}
    for item in fields(Row):
        if item.name in ("session", "policy", "strategy_runs"):
            continue
        defaults[item.name] = 0 if item.type in ("int", "float") else ""
    defaults.update(budget=8000, budget_label="8k", latest_user_intact=True, origin="shared")
    defaults.update(recall_cost_usd_openai=9.0, recall_cost_usd_anthropic=9.0)
    defaults.update(values)
    return Row(session=session, policy=policy, **defaults)


def cells(rows: list[Row], policy: str = "forge") -> dict[str, list[str]]:
    return {line[1]: line for line in target_rows(rows, policy)}


def test_forge_is_compared_with_the_cheapest_other_policy_that_fits_the_budget() -> None:
    rows = []
    for session in ("a", "b"):
        rows += [
            row(session, "none", recall_cost_usd_openai=0.1, over_budget=3),  # cheap, over
            row(session, "codex", recall_cost_usd_openai=1.0, recall_cost_usd_anthropic=1.0),
            row(session, "claude-code", recall_cost_usd_openai=2.0, recall_cost_usd_anthropic=0.5),
            row(session, "masking", referenced_lost=1, referenced_outputs=9, over_budget=2),
            row(session, "masking-fit", referenced_lost=3, referenced_outputs=9),
            row(
                session,
                "forge",
                recall_cost_usd_openai=0.8,
                recall_cost_usd_anthropic=0.9,
                referenced_lost=2,
                referenced_outputs=9,
                user_requests_verbatim=4,
                user_requests_total=4,
            ),
        ]
    line = cells(rows)["all sessions (2)"]
    assert line[2] == "0 ✓"
    assert line[3] == "1.6000 vs codex 2.0000: 0.800 ✓"  # none is cheaper but goes over
    assert line[4] == "1.8000 vs claude-code 1.0000: 1.800 ✗"
    assert line[5] == "4/18 vs 2, 4 over ✗"  # masking-10 keeps more by going over budget
    assert line[6] == "4/18 vs 6 ✓"  # masking-10 held to the budget loses more
    assert line[7] == "8/8"


def test_the_anthropic_column_comes_from_the_forge_policy_told_anthropic_prices() -> None:
    assert anthropic_twin("forge") == "forge@anthropic"
    assert anthropic_twin("forge:mask_batch=5") == "forge@anthropic:mask_batch=5"
    assert anthropic_twin("forge@anthropic") == "forge@anthropic"
    rows = [
        row("a", "codex", recall_cost_usd_openai=1.0, recall_cost_usd_anthropic=1.0),
        row("a", "forge", recall_cost_usd_openai=0.85, recall_cost_usd_anthropic=1.2),
        row("a", "forge@anthropic", recall_cost_usd_openai=2.0, recall_cost_usd_anthropic=0.7),
        row("a", "masking", referenced_lost=1, referenced_outputs=5),
    ]
    line = cells(rows)["all sessions (1)"]
    assert line[3] == "0.8500 vs codex 1.0000: 0.850 ✓"
    assert line[4] == "0.7000 vs codex 1.0000: 0.700 ✓"
    assert line[5] == "0/0 vs 1 ✓"
    assert line[6] == "0/0 (no masking-fit)"


def test_without_a_fitting_rival_the_cost_target_holds_trivially() -> None:
    rows = [
        row("a", "codex", recall_cost_usd_openai=0.1, over_budget=1),
        row("a", "forge", recall_cost_usd_openai=0.5),
    ]
    assert "(no other policy at 0 over budget) ✓" in cells(rows)["all sessions (1)"][3]
