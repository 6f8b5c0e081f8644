"""Issue 23's targets, cell by cell, from the replay's rows (docs/adr/0038 section 7).

For each budget and group of sessions (all summed, the combined session, the shared five, the
larger corpus), for a forge policy:
- recall-adjusted dollars ÷ the cheapest *other* policy with 0 requests over budget in that
  cell, under each price model (target ≤ 0.9; "—" when no other policy fits the budget);
- referenced outputs lost against `masking` (masking-10, the issue's comparator, which may send
  requests over budget) and against `masking-fit` (masking-10 held to the budget);
- requests over budget (target 0) and user messages verbatim per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.replay_tables import groups

if TYPE_CHECKING:
    from bench.replay import Row

COST_TARGET = 0.9
"""Forge's recall-adjusted dollars at most this share of the cheapest other fitting policy."""
LOSS_COMPARATOR = "masking"
FITTING_LOSS_COMPARATOR = "masking-fit"
PRICE_MODELS = (("OpenAI", "recall_cost_usd_openai"), ("Anthropic", "recall_cost_usd_anthropic"))


@dataclass(frozen=True)
class CostCell:
    """Forge against the cheapest other policy at 0 over budget, under one price model."""

    forge: float
    rival: str
    """The cheapest other fitting policy ("" when none fits)."""
    rival_cost: float

    @property
    def ratio(self) -> float | None:
        """forge ÷ rival (None without a rival)."""
        return self.forge / self.rival_cost if self.rival and self.rival_cost else None

    @property
    def met(self) -> bool:
        """The target holds (trivially without a rival)."""
        return self.ratio is None or self.ratio <= COST_TARGET

    def text(self, model: str) -> str:
        """`OpenAI 0.82 vs codex 0.76: 1.079 ✗`."""
        ratio = self.ratio
        if ratio is None:
            return f"{self.forge:.4f} (no other policy at 0 over budget) ✓"
        mark = "✓" if self.met else "✗"
        return f"{self.forge:.4f} vs {self.rival} {self.rival_cost:.4f}: {ratio:.3f} {mark}"


def cost_cell(totals: dict[str, Row], policy: str, attribute: str) -> CostCell:
    """The cost comparison of `policy` in one cell (`totals`: every policy's summed row)."""
    fitting = {
        name: getattr(row, attribute)
        for name, row in totals.items()
        if name != policy and not name.startswith("forge") and row.over_budget == 0
    }
    mine = float(getattr(totals[policy], attribute))
    if not fitting:
        return CostCell(mine, "", 0.0)
    rival = min(fitting, key=lambda name: fitting[name])
    return CostCell(mine, rival, float(fitting[rival]))


def anthropic_twin(policy: str) -> str:
    """The forge policy run with the Anthropic-style model's cache prices that stands for
    `policy` in the Anthropic-style column: `forge:x=1` -> `forge@anthropic:x=1`."""
    kind, colon, options = policy.partition(":")
    if "@" in kind:
        return policy
    return f"{kind}@anthropic{colon}{options}"


def _loss(mines: Sequence[Row], totals: dict[str, Row], comparator: str) -> str:
    other = totals.get(comparator)
    lost = max(row.referenced_lost for row in mines)
    text = " / ".join(dict.fromkeys(f"{r.referenced_lost}/{r.referenced_outputs}" for r in mines))
    if other is None:
        return f"{text} (no {comparator})"
    over = f", {other.over_budget} over" if other.over_budget else ""
    mark = "✓" if lost <= other.referenced_lost else "✗"
    return f"{text} vs {other.referenced_lost}{over} {mark}"


def _totals(
    rows: Sequence[Row], budget: int, sessions: Sequence[str], group: str
) -> dict[str, Row]:
    from bench.replay import _sum_rows

    totals: dict[str, Row] = {}
    for name in dict.fromkeys(r.policy for r in rows):
        matching = [
            r for r in rows if r.budget == budget and r.policy == name and r.session in sessions
        ]
        if len(matching) == len(sessions):
            totals[name] = _sum_rows(matching, group)
    return totals


def target_rows(rows: Sequence[Row], policy: str) -> list[list[str]]:
    """One table row per budget and group for `policy` (its Anthropic-style cells from its
    `anthropic_twin` when the rows hold it; the other cells then show both runs, the
    `policy`'s first)."""
    table = []
    budgets = list(dict.fromkeys((r.budget, r.budget_label) for r in rows))
    for budget, label in budgets:
        for group, sessions in groups(rows):
            totals = _totals(rows, budget, sessions, group)
            if policy not in totals:
                continue
            twin = anthropic_twin(policy)
            twin = twin if twin in totals else policy
            mines = [totals[policy]] + ([totals[twin]] if twin != policy else [])
            cells = [
                cost_cell(totals, chosen, attribute)
                for chosen, (_, attribute) in zip((policy, twin), PRICE_MODELS, strict=True)
            ]
            over = max(row.over_budget for row in mines)
            verbatim = " / ".join(
                dict.fromkeys(f"{r.user_requests_verbatim}/{r.user_requests_total}" for r in mines)
            )
            costs = (cell.text(model) for cell, (model, _) in zip(cells, PRICE_MODELS, strict=True))
            table.append(
                [
                    label,
                    group,
                    f"{over} {'✓' if over == 0 else '✗'}",
                    *costs,
                    _loss(mines, totals, LOSS_COMPARATOR),
                    _loss(mines, totals, FITTING_LOSS_COMPARATOR),
                    verbatim,
                ]
            )
    return table


HEADER = (
    "budget",
    "group",
    "over budget",
    "$ OpenAI +recall vs cheapest other at 0 over (≤ 0.9)",
    "$ Anthropic +recall vs cheapest other at 0 over (≤ 0.9)",
    "ref. outputs lost vs masking-10",
    "vs masking-10 held to the budget",
    "user msgs verbatim",
)


def section(rows: Sequence[Row], policies: Sequence[str]) -> list[str]:
    """Markdown lines: the targets table of each forge policy."""
    from bench.replay import markdown_table

    parts: list[str] = []
    for policy in policies:
        twin_of = policy.replace("@anthropic", "", 1)
        if not policy.startswith("forge") or (twin_of != policy and twin_of in policies):
            continue  # a twin shows in its policy's table
        table = target_rows(rows, policy)
        if not table:
            continue
        parts += [
            "",
            f"### Issue 23 targets for `{policy}`",
            "",
            "Recall-adjusted dollars against the cheapest other policy with 0 requests over "
            "budget in the same cell; referenced outputs lost against masking-10 (which may go "
            "over budget: its over-budget requests are named) and against masking-10 held to "
            "the budget (`masking-fit`). docs/adr/0038 section 7 reads this table.",
            "",
            markdown_table(HEADER, table),
        ]
    return parts
