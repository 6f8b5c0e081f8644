"""Issue 23's targets table (`bench.replay_targets`): cheapest other policy at 0 over budget,
the Anthropic-style twin of a forge policy, loss against masking-10 and masking-10 held to the
budget."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from bench.holdout import HELD_BACK, TUNING, part
from bench.replay import Row
from bench.replay_targets import anthropic_twin, issue37_rows, split_groups, target_rows


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


def test_issue_37_targets_compare_with_policies_that_fit_and_keep_as_many_user_messages() -> None:
    rows = []
    for session in ("a", "b"):
        common = {"referenced_outputs": 9, "user_requests_total": 4}
        rows += [
            # Cheaper than forge, loses less, keeps as many user messages: dominates.
            row(
                session,
                "codex",
                recall_cost_usd_openai=0.5,
                referenced_lost=1,
                user_requests_verbatim=4,
                **common,
            ),
            # Cheapest, but keeps fewer user messages: no comparator, does not dominate.
            row(
                session,
                "claude-code",
                recall_cost_usd_openai=0.1,
                referenced_lost=0,
                user_requests_verbatim=1,
                **common,
            ),
            # Cheaper and faithful, but over budget: left out.
            row(
                session,
                "none",
                recall_cost_usd_openai=0.2,
                over_budget=2,
                user_requests_verbatim=4,
                **common,
            ),
            row(
                session,
                "forge",
                recall_cost_usd_openai=0.6,
                recall_cost_usd_anthropic=0.4,
                referenced_lost=2,
                unrecoverable_lost=1,
                trail_probes_hit=3,
                trail_probes_total=4,
                user_requests_verbatim=4,
                **common,
            ),
        ]
    table = issue37_rows(rows, "forge")
    line = {cells[1]: cells for cells in table}["all sessions (2)"]
    assert line[2] == "0 ✓"
    assert line[3] == "2 ✗"
    assert line[4] == "6/8 (75 %) ✗"
    assert line[5] == "1.2000 vs codex 1.0000: 1.200 ✗"
    assert line[6] == "0.8000 vs codex 18.0000: 0.044 ✓"
    assert line[7] == "codex ✗"
    assert line[8] == "none ✓"
    assert line[9] == "4/18" and line[10] == "8/8"


def test_the_split_is_fixed_by_name_and_reported_part_by_part() -> None:
    assert part("anything", "shared") == TUNING
    assert part("combined", "combined") == "combined"
    assert part("aider__chat-history-12", "bench/corpus") == TUNING
    assert part("aider__chat-history-343", "bench/corpus") == HELD_BACK
    rows = [
        row("aider__chat-history-12", "forge", origin="bench/corpus"),
        row("aider__chat-history-343", "forge", origin="bench/corpus"),
        row("x", "forge", origin="shared"),
    ]
    assert [label for label, _ in split_groups(rows)] == [
        "all sessions (3)",
        "tuning (2)",
        "held-back (1)",
    ]
