"""The replay's issue-22 tables: recall-adjusted dollars under both cache price models,
referenced-output loss, user messages verbatim per request and over-budget requests, per
budget and per group of sessions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bench.anthropic_cache import LOOKBACK, MINIMUM, READ_MULTIPLIER, WRITE_MULTIPLIER
from bench.prices import ANTHROPIC_MAIN, ANTHROPIC_SUMMARIZATION, MAIN, SUMMARIZATION
from bench.sessions import COMBINED, SHARED

if TYPE_CHECKING:
    from bench.replay import Row

HEADER = (
    "group",
    "policy",
    "requests",
    "over budget",
    "$ OpenAI",
    "+recall",
    "÷mask",
    "$ Anthropic",
    "+recall",
    "÷mask",
    "ref. outputs lost",
    "ref. tokens missing",
    "user msgs verbatim",
    "newest 3 verbatim",
    "unrecoverable",
    "trail probes",
)


def groups(rows: Sequence[Row]) -> list[tuple[str, list[str]]]:
    """(group label, sessions) in table order: all sessions, the combined session, then each
    origin (the shared corpus first)."""
    individual = list(dict.fromkeys(r.session for r in rows if r.session != COMBINED))
    origins: dict[str, list[str]] = {}
    for row in rows:
        if row.session != COMBINED:
            origins.setdefault(row.origin or "other", [])
            if row.session not in origins[row.origin or "other"]:
                origins[row.origin or "other"].append(row.session)
    result = [(f"all sessions ({len(individual)})", individual)]
    if any(r.session == COMBINED for r in rows):
        result.append((COMBINED, [COMBINED]))
    if len(origins) > 1:
        ordered = sorted(origins, key=lambda origin: (origin != SHARED, origin))
        result += [(f"{origin} ({len(origins[origin])})", origins[origin]) for origin in ordered]
    return result


def _fraction(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def trail_text(row: Row) -> str:
    """`41/48 (85 %)`, or `—` when no request came after a compaction."""
    if not row.trail_probes_total:
        return "—"
    share = 100 * row.trail_probes_hit / row.trail_probes_total
    return f"{row.trail_probes_hit}/{row.trail_probes_total} ({share:.0f} %)"


def section(rows: Sequence[Row], policies: Sequence[str]) -> list[str]:
    """Markdown lines: one table per budget, rows = group x policy."""
    from bench.replay import _ratio, _sum_rows, markdown_table

    parts = [
        "",
        "### Recall-adjusted cost, two cache price models, fidelity per request",
        "",
        f"OpenAI-style: automatic prefix caching, {MAIN.model} ({MAIN.input} input, "
        f"{MAIN.cached_input} cached, {MAIN.output} output), summaries on {SUMMARIZATION.model}. "
        f"Anthropic-style: breakpoints where Forge's Anthropic provider puts them (tools, system "
        f"prompt, newest and third-newest merged messages), writes {WRITE_MULTIPLIER}x input, "
        f"reads {READ_MULTIPLIER}x, {LOOKBACK}-block "
        f"lookback, {MINIMUM:,}-token minimum, nothing expires; {ANTHROPIC_MAIN.model} "
        f"({ANTHROPIC_MAIN.input} input, {ANTHROPIC_MAIN.output} output), summaries on "
        f"{ANTHROPIC_SUMMARIZATION.model} ({ANTHROPIC_SUMMARIZATION.input}/"
        f"{ANTHROPIC_SUMMARIZATION.output}), uncached. **+recall** adds one re-fetch request "
        "per lost referenced output (the context then plus that output). **ref. outputs "
        "lost**: (assistant message, referenced earlier tool output) pairs whose output was not "
        "verbatim in the request that produced the message; **ref. tokens missing**: the "
        "referenced token was nowhere in that request (bench/README.md states the heuristic). "
        "**user msgs verbatim**: (user message, request) pairs with the message verbatim. "
        "**unrecoverable**: lost referenced outputs no recall key in the request reaches (all "
        "of them for a policy without `recall`); **trail probes**: work-trail probes answered "
        "after the policy's first compaction (bench/trail.py). "
        "÷mask is to `masking` (10 outputs kept) of the same group.",
    ]
    budgets = list(dict.fromkeys((r.budget, r.budget_label) for r in rows))
    for budget, label in budgets:
        table: list[list[str]] = []
        for group, sessions in groups(rows):
            totals = {}
            for policy in policies:
                matching = [
                    r
                    for r in rows
                    if r.budget == budget and r.policy == policy and r.session in sessions
                ]
                if len(matching) == len(sessions):
                    totals[policy] = _sum_rows(matching, group)
            masking = totals.get("masking")
            for policy, total in totals.items():
                table.append(
                    [
                        group,
                        policy,
                        str(total.requests),
                        str(total.over_budget),
                        f"{total.cost_usd_openai:.4f}",
                        f"{total.recall_cost_usd_openai:.4f}",
                        _ratio(total.recall_cost_usd_openai, masking.recall_cost_usd_openai)
                        if masking
                        else "—",
                        f"{total.cost_usd_anthropic:.4f}",
                        f"{total.recall_cost_usd_anthropic:.4f}",
                        _ratio(total.recall_cost_usd_anthropic, masking.recall_cost_usd_anthropic)
                        if masking
                        else "—",
                        _fraction(total.referenced_lost, total.referenced_outputs),
                        _fraction(total.referenced_tokens_missing, total.referenced_tokens),
                        _fraction(total.user_requests_verbatim, total.user_requests_total),
                        _fraction(total.newest_tools_verbatim, total.requests),
                        str(total.unrecoverable_lost),
                        trail_text(total),
                    ]
                )
        parts += ["", f"#### Budget {label}", "", markdown_table(HEADER, table)]
    return parts
