"""`python -m bench.sweep`: Forge's context constants swept on the replay (issue 23, ADR 0038).

Each variant runs the replay's `forge` policy with one module constant or setting changed (the
constants are read at run time, so the sweep sets them on their modules for that variant and
puts them back), over the replay's sessions and budgets, and prints one markdown table per
variable: recall-adjusted dollars under both price models (Anthropic-style from the
`forge@anthropic` run, told that model's cache prices), requests over budget,
referenced-output loss, unrecoverable loss and user messages verbatim, summed over all sessions
(the combined one apart), for the tuning and the held-back parts of the fixed split
(`bench.holdout`, issue 37) side by side: choose on the tuning part, report the held-back one.

`--only NAME` (repeatable) runs one variable's rows; `--budget` as in the replay.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bench.holdout import HELD_BACK, TUNING, part
from bench.policies import parse_policy
from bench.replay import DEFAULT_BUDGETS, Row, _budget, load_sessions, replay_all


@dataclass(frozen=True)
class Variable:
    """One swept name: a module constant (`module:NAME`) or a setting (`setting:name`)."""

    name: str
    target: str
    values: tuple[Any, ...]
    default: Any


VARIABLES = (
    Variable("ingest_max_share", "setting:ingest_max_share", (0.15, 0.25, 0.35, 0.5), 0.25),
    Variable("user_instruction_share", "setting:user_instruction_share", (0.3, 0.4, 0.5, 0.6), 0.5),
    Variable(
        "MINIMUM_SAVING_TOKENS",
        "forge.context.strategies.masking:MINIMUM_SAVING_TOKENS",
        (10, 25, 50, 100),
        25,
    ),
    Variable(
        "MINIMUM_WORK_TOKENS",
        "forge.context.strategies.goal_batch:MINIMUM_WORK_TOKENS",
        (50, 150, 400, 1000),
        150,
    ),
    Variable(
        "RECENT_SHARE", "forge.context.strategies.threshold:RECENT_SHARE", (0.15, 0.25, 0.35), 0.25
    ),
    Variable(
        "KEEP_REFERENCED_WITHIN",
        "forge.context.strategies.mask_choice:KEEP_REFERENCED_WITHIN",
        (0, 5, 8, 12),
        8,
    ),
    Variable(
        "SUPERSEDED_FIRST",
        "forge.context.strategies.mask_choice:SUPERSEDED_FIRST",
        (False, True),
        True,
    ),
    Variable(
        "KEEP_FAILING", "forge.context.strategies.mask_choice:KEEP_FAILING", (False, True), True
    ),
)


@contextmanager
def constant(target: str, value: Any) -> Iterator[None]:
    """`module:NAME` set to `value` for the block."""
    module_name, _, name = target.partition(":")
    module = importlib.import_module(module_name)
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def rows_for(
    variable: Variable, value: Any, sessions: Any, budgets: Sequence[int | None]
) -> list[Row]:
    """The replay's rows for `forge` and `forge@anthropic` (told each price model's cache
    prices, ADR 0038 §8) with `variable` at `value`."""
    if variable.target.startswith("setting:"):
        key = variable.target.partition(":")[2]
        specs = [parse_policy(f"{kind}:{key}={value}") for kind in FORGE_POLICIES]
        return asyncio.run(replay_all(sessions, specs, budgets))
    with constant(variable.target, value):
        specs = [parse_policy(kind) for kind in FORGE_POLICIES]
        return asyncio.run(replay_all(sessions, specs, budgets))


FORGE_POLICIES = ("forge", "forge@anthropic")
"""Each variant runs as both: the Anthropic-style dollars come from the second."""


GROUPS = (TUNING, HELD_BACK, "all")


def _group(row: Row) -> str | None:
    group = part(row.session, row.origin)
    return None if group not in (TUNING, HELD_BACK) else group


def summary(rows: Sequence[Row]) -> dict[str, dict[str, float]]:
    """Sums per group (tuning, held-back, all): the Anthropic-style dollars from the rows of the
    `@anthropic` run when there is one, everything else from the other run's."""
    twin = any("@anthropic" in row.policy for row in rows)
    totals: dict[str, dict[str, float]] = {}
    for row in rows:
        group = _group(row)
        if group is None:
            continue
        anthropic_run = "@anthropic" in row.policy
        if twin and anthropic_run:
            fields: tuple[str, ...] = ("recall_cost_usd_anthropic",)
        elif twin:
            fields = SUMMED[:1] + SUMMED[2:]
        else:
            fields = SUMMED
        for name in (group, "all"):
            bucket = totals.setdefault(name, {})
            for field in fields:
                bucket[field] = bucket.get(field, 0) + float(getattr(row, field))
    return totals


SUMMED = (
    "recall_cost_usd_openai",
    "recall_cost_usd_anthropic",
    "over_budget",
    "referenced_lost",
    "referenced_outputs",
    "unrecoverable_lost",
    "user_requests_verbatim",
    "user_requests_total",
)


def table(variable: Variable, results: list[tuple[Any, Sequence[Row]]]) -> str:
    """One markdown table for a variable."""
    lines = [
        f"**{variable.name}** (default {variable.default}); budgets summed",
        "",
        "| value | group | $ OpenAI +recall | $ Anthropic +recall | over budget "
        "| ref. outputs lost | unrecoverable | user msgs verbatim |",
        "| --- | --- | --: | --: | --: | --: | --: | --: |",
    ]
    for value, rows in results:
        totals = summary(rows)
        for group in GROUPS:
            bucket = totals.get(group)
            if not bucket:
                continue
            mark = " (default)" if value == variable.default else ""
            lines.append(
                f"| {value}{mark} | {group} | {bucket['recall_cost_usd_openai']:.4f} "
                f"| {bucket['recall_cost_usd_anthropic']:.4f} | {int(bucket['over_budget'])} "
                f"| {int(bucket['referenced_lost'])}/{int(bucket['referenced_outputs'])} "
                f"| {int(bucket['unrecoverable_lost'])} "
                f"| {int(bucket['user_requests_verbatim'])}/{int(bucket['user_requests_total'])} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sweep", description=__doc__)
    parser.add_argument("--only", action="append", help="a variable's name (repeatable)")
    parser.add_argument("--budget", action="append", type=_budget)
    args = parser.parse_args(argv if argv is not None else sys.argv[1:])
    budgets = list(dict.fromkeys(args.budget or DEFAULT_BUDGETS))
    sessions = load_sessions([], with_combined=False)
    chosen = [v for v in VARIABLES if not args.only or v.name in args.only]
    for variable in chosen:
        results = [
            (value, rows_for(variable, value, sessions, budgets)) for value in variable.values
        ]
        print(table(variable, results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
