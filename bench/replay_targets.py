"""The targets tables, cell by cell, from the replay's rows: issue 37's (docs/adr/0051) per
part of the fixed split (`bench.holdout`), then issue 23's (docs/adr/0038 section 7).

Issue 37's, for a forge policy (its Anthropic-style cells from its `anthropic_twin`), per budget
and group (all sessions, the tuning part, the held-back part, the combined session):
- `unrecoverable_lost` (target 0) and the work-trail probes answered (target 100 %);
- recall-adjusted dollars ÷ the cheapest other policy with 0 requests over budget that keeps at
  least as many (user message, request) pairs verbatim (target ≤ 1.00), per price model;
- **dominated by**: every other policy with 0 requests over budget that is cheaper, loses fewer
  referenced outputs and keeps at least as many user messages verbatim (target: none).

For each budget and group of sessions (all summed, the combined session, the shared five, the
larger corpus), for a forge policy:
- recall-adjusted dollars ÷ the cheapest *other* policy with 0 requests over budget in that
  cell, under each price model (target ≤ 0.9; "—" when no other policy fits the budget);
- referenced outputs lost against `masking` (masking-10, the issue's comparator, which may send
  requests over budget) and against `masking-fit` (masking-10 held to the budget);
- requests over budget (target 0) and user messages verbatim per request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.holdout import HELD_BACK, TUNING, part
from bench.replay_tables import groups, trail_text
from bench.sessions import COMBINED

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


PARITY_TARGET = 1.0
"""Issue 37: Forge's recall-adjusted dollars at most this share of the cheapest comparable."""


def split_groups(rows: Sequence[Row]) -> list[tuple[str, list[str]]]:
    """(label, sessions): all sessions, the tuning part, the held-back part, combined."""
    individual = list(dict.fromkeys(r.session for r in rows if r.session != COMBINED))
    origin = {r.session: r.origin for r in rows}
    result = [(f"all sessions ({len(individual)})", individual)]
    for name in (TUNING, HELD_BACK):
        chosen = [s for s in individual if part(s, origin[s]) == name]
        if chosen:
            result.append((f"{name} ({len(chosen)})", chosen))
    if any(r.session == COMBINED for r in rows):
        result.append((COMBINED, [COMBINED]))
    return result


def _others(totals: dict[str, Row]) -> list[Row]:
    return [
        row for name, row in totals.items() if not name.startswith("forge") and row.over_budget == 0
    ]


def parity_cell(totals: dict[str, Row], mine: Row, attribute: str) -> str:
    """Forge's dollars ÷ the cheapest other fitting policy keeping ≥ as many user messages."""
    cost = float(getattr(mine, attribute))
    rivals = [
        row for row in _others(totals) if row.user_requests_verbatim >= mine.user_requests_verbatim
    ]
    if not rivals:
        return f"{cost:.4f} (no comparable policy) ✓"
    rival = min(rivals, key=lambda row: float(getattr(row, attribute)))
    base = float(getattr(rival, attribute))
    ratio = cost / base if base else float("inf")
    mark = "✓" if ratio <= PARITY_TARGET else "✗"
    return f"{cost:.4f} vs {rival.policy} {base:.4f}: {ratio:.3f} {mark}"


def dominated_by(totals: dict[str, Row], mine: Row, attribute: str) -> list[str]:
    """Other fitting policies cheaper, losing fewer referenced outputs and keeping at least as
    many user messages verbatim."""
    cost = float(getattr(mine, attribute))
    return [
        row.policy
        for row in _others(totals)
        if float(getattr(row, attribute)) < cost
        and row.referenced_lost < mine.referenced_lost
        and row.user_requests_verbatim >= mine.user_requests_verbatim
    ]


def _dominated_text(names: list[str]) -> str:
    return "none ✓" if not names else ", ".join(names) + " ✗"


def issue37_rows(rows: Sequence[Row], policy: str) -> list[list[str]]:
    """One row per budget and group of issue 37's targets for `policy` and its twin."""
    table = []
    budgets = list(dict.fromkeys((r.budget, r.budget_label) for r in rows))
    for budget, label in budgets:
        for group, sessions in split_groups(rows):
            totals = _totals(rows, budget, sessions, group)
            if policy not in totals:
                continue
            twin = anthropic_twin(policy)
            twin = twin if twin in totals else policy
            runs = [totals[policy]] + ([totals[twin]] if twin != policy else [])

            def both(text: Callable[[Row], str], runs: list[Row] = runs) -> str:
                return " / ".join(dict.fromkeys(text(r) for r in runs))

            unrecoverable = max(r.unrecoverable_lost for r in runs)
            complete = all(r.trail_probes_hit == r.trail_probes_total for r in runs)
            over = max(r.over_budget for r in runs)
            cheapest = [
                parity_cell(totals, mine, attribute)
                for mine, (_, attribute) in zip(
                    (totals[policy], totals[twin]), PRICE_MODELS, strict=True
                )
            ]
            dominated = [
                _dominated_text(dominated_by(totals, mine, attribute))
                for mine, (_, attribute) in zip(
                    (totals[policy], totals[twin]), PRICE_MODELS, strict=True
                )
            ]
            table.append(
                [
                    label,
                    group,
                    f"{over} {'✓' if over == 0 else '✗'}",
                    f"{both(lambda r: str(r.unrecoverable_lost))} "
                    f"{'✓' if unrecoverable == 0 else '✗'}",
                    f"{both(trail_text)} {'✓' if complete else '✗'}",
                    *cheapest,
                    *dominated,
                    both(lambda r: f"{r.referenced_lost}/{r.referenced_outputs}"),
                    both(lambda r: f"{r.user_requests_verbatim}/{r.user_requests_total}"),
                ]
            )
    return table


ISSUE37_HEADER = (
    "budget",
    "group",
    "over budget",
    "unrecoverable lost (0)",
    "trail probes (100 %)",
    "$ OpenAI +recall vs cheapest comparable (≤ 1.00)",
    "$ Anthropic +recall vs cheapest comparable (≤ 1.00)",
    "dominated by (OpenAI)",
    "dominated by (Anthropic)",
    "ref. outputs lost",
    "user msgs verbatim",
)


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
        table = issue37_rows(rows, policy)
        if table:
            parts += [
                "",
                f"### Issue 37 targets for `{policy}`",
                "",
                "Per budget and group: the tuning and held-back parts of the fixed split "
                "(bench/holdout.py) separately. A comparable policy has 0 requests over budget "
                "and keeps at least as many (user message, request) pairs verbatim; *dominated "
                "by* lists those also cheaper and losing fewer referenced outputs. Cells show "
                "the OpenAI-style run, then the Anthropic-style twin where they differ. "
                "docs/adr/0051 reads this table.",
                "",
                markdown_table(ISSUE37_HEADER, table),
            ]
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
