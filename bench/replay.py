"""Replay real sessions under several context policies: what each costs and what it keeps.

`python -m bench.replay [FILES...] [--budget N ...] [--policy NAME ...] [--json FILE]`

FILES may be session files or folders of `*.messages.json`. Defaults: every trajectory in
../shared/corpus/trajectories/, then every session in bench/corpus/, plus the combined session
(the shared corpus's sessions back to back, each introduced by a "Next task: ..." user message;
with FILES, all of them); budgets 8k, 12k, 16k, 32k, 64k and gpt-4o's default budget
(`--budget default`); policies none, masking (10 outputs kept), masking-3, masking-5,
masking-fit, summarize-at-90, eager, the peers (codex, codex-scaled, claude-code, openhands,
openhands-100, gemini-cli, opencode), forge and forge@anthropic (Forge told the OpenAI-style or
the Anthropic-style model's cache prices; `forge:key=value,...` adds a variant).

Each session is replayed message by message: before each assistant message the policy turns
the history into a request, which is recorded (Forge's built-in tool definitions, the same for
every policy, then the messages), checked (`bench.fidelity`, `bench.references`) and costed
(`bench.costing`) under two cache price models: OpenAI-style automatic prefix caching
(`bench.cache_model`) and Anthropic-style explicit breakpoints (`bench.anthropic_cache`), with
and without the re-fetch of each referenced output a policy lost. Summaries come from the
deterministic summarizer of `bench.server_process`, in its own process. A missing corpus, an
invalid request or any other failure raises; nothing is skipped. The method is in docs/adr/0018.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from bench import replay_tables, replay_targets
from bench.cache_model import RequestTokenizer, Segment, prompt_tokens
from bench.costing import CostMeter, Refetch
from bench.fidelity import FidelityTracker
from bench.policies import (
    DEFAULT_POLICIES,
    ForgePolicy,
    Policy,
    PolicyContext,
    PolicySpec,
    Summarizer,
    baseline,
    cache_pricing,
    forge_settings,
    parse_policy,
)
from bench.prices import MAIN, SUMMARIZATION
from bench.recall_keys import refetch_messages
from bench.references import Reference, references
from bench.server_process import ServerProcess
from bench.sessions import (
    BENCH_CORPUS,
    COMBINED,
    Session,
    combine,
    load_session,
    trajectory_files,
)
from forge.agent.tools.registry import default_registry
from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.llm.messages import Message
from forge.llm.model_info import context_window
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.tokenizer import TiktokenCounter, get_encoding

DEFAULT_BUDGETS: tuple[int | None, ...] = (8_000, 12_000, 16_000, 32_000, 64_000, None)
"""None is the main model's default budget (its window minus the reply headroom)."""
QUICK_BUDGETS: tuple[int | None, ...] = (8_000, 32_000, None)
"""`--quick`: a tight budget, a middle one and the default, for a shorter run."""
SUMMARIZER_LATENCY = 0.005
"""Seconds the summarizer waits before answering: small, this is not a speed benchmark."""
API_KEY = "bench-key"


@dataclass
class Row:
    """One policy x session x budget."""

    session: str
    budget: int
    budget_label: str
    policy: str
    requests: int
    prompt_tokens: int
    """Agent requests' prompt tokens summed over the session, tool definitions included."""
    uncached_prompt_tokens: int
    cached_prompt_tokens: int
    agent_output_tokens: int
    """Tokens of the replayed assistant messages (the same for every policy)."""
    cost_usd: float
    summary_calls: int
    summary_input_tokens: int
    summary_output_tokens: int
    peak_prompt_tokens: int
    over_budget: int
    user_verbatim: int
    user_total: int
    excluded_verbatim: int
    excluded_total: int
    newest_tools_verbatim: int
    """Requests in which the newest 3 tool outputs were all verbatim (of `requests`)."""
    latest_user_intact: bool
    paths_recalled: int
    paths_total: int
    seconds: float
    strategy_runs: dict[str, int] = field(default_factory=dict)
    """For a forge policy: completed runs that changed something, by strategy (tier)."""
    cost_usd_openai: float = 0.0
    """= `cost_usd`: OpenAI-style automatic prefix caching (bench.cache_model)."""
    cost_usd_anthropic: float = 0.0
    """Anthropic-style explicit breakpoints (bench.anthropic_cache), Claude Sonnet prices."""
    recall_cost_usd_openai: float = 0.0
    """`cost_usd_openai` plus one re-fetch request per lost referenced output."""
    recall_cost_usd_anthropic: float = 0.0
    recall_requests: int = 0
    """The re-fetch requests added (= `referenced_lost`)."""
    cache_read_tokens: int = 0
    """Anthropic-style: prompt tokens read from the cache (agent requests)."""
    cache_write_tokens: int = 0
    """Anthropic-style: prompt tokens written to the cache (agent requests)."""
    referenced_outputs: int = 0
    """(assistant message, referenced earlier tool output) pairs (bench/references.py)."""
    referenced_lost: int = 0
    """Of those, the output was not verbatim in the request that produced the message."""
    referenced_tokens: int = 0
    referenced_tokens_missing: int = 0
    """(assistant message, referenced token) pairs whose token was nowhere in the request."""
    user_requests_verbatim: int = 0
    """(user message, request) pairs with the user message verbatim in the request."""
    user_requests_total: int = 0
    """User messages (observations aside) before each request, summed over requests."""
    origin: str = ""
    """Where the session comes from (`shared`, `bench/corpus`, `combined`, a folder name)."""
    unrecoverable_lost: int = 0
    """Of `referenced_lost`, outputs no recall key in the request reaches (every lost output
    for a policy without `recall`; bench/recall_keys.py)."""
    trail_probes_hit: int = 0
    """Work-trail probes the requests after the first compaction answered (bench/trail.py)."""
    trail_probes_total: int = 0

    @property
    def agent_plus_summary_input(self) -> int:
        """Agent prompt tokens plus summarization input tokens."""
        return self.prompt_tokens + self.summary_input_tokens


def budget_label(budget: int | None, resolved: int) -> str:
    """`8k` for a set budget, `default (109k)` for the model's own."""
    if budget is None:
        return f"default ({resolved / 1000:.0f}k)"
    return f"{budget / 1000:g}k" if budget % 1000 == 0 else f"{budget:,}"


class Replay:
    """Everything shared by the runs of one replay: tokenizer, tools, summarizer, server."""

    def __init__(self, server: ServerProcess, main_model: str, summary_model: str) -> None:
        self.server = server
        self.main_model = main_model
        self.summary_model = summary_model
        self.window = context_window(main_model)
        self.tokenizer = RequestTokenizer(get_encoding("o200k_base"))
        self.tools: Segment = self.tokenizer.tools(default_registry().specs())
        self.excluded_tools = set(ContextSettings().excluded_tools)
        self.summary_provider = OpenAICompatibleProvider(
            summary_model, server.base_url, API_KEY, max_retries=0
        )
        self.summarizer = Summarizer(self.summary_provider)
        self._references: dict[int, tuple[Session, dict[int, Reference]]] = {}

    def measure(self, messages: Sequence[Message]) -> int:
        """A request's prompt tokens, tool definitions included."""
        return prompt_tokens(self.tokenizer.request(self.tools, messages))

    async def default_budget(self) -> int:
        """The main model's default budget, as Forge's Manager computes it."""
        policy = self.forge_policy(PolicySpec("forge", "forge"), None)
        try:
            return policy.max_tokens
        finally:
            await policy.aclose()

    def forge_policy(
        self, spec: PolicySpec, budget: int | None, observations: frozenset[int] = frozenset()
    ) -> ForgePolicy:
        """A fresh Forge manager for one run."""
        provider = OpenAICompatibleProvider(
            self.main_model, self.server.base_url, API_KEY, max_retries=0
        )
        return ForgePolicy(
            spec.name,
            forge_settings(spec, budget),
            provider,
            TiktokenCounter(self.main_model),
            context_window=self.window,
            summarization_model=self.summary_model,
            observations=observations,
            pricing=cache_pricing(spec.cache),
        )

    async def run(
        self, session: Session, spec: PolicySpec, budget: int | None, resolved: int
    ) -> Row:
        """Replay one session under one policy at one budget."""
        policy: Policy
        if spec.kind == "forge":
            policy = self.forge_policy(spec, budget, frozenset(session.observations))
        else:
            context = PolicyContext(
                session, resolved, self.measure, self.summarizer, self.tokenizer.count
            )
            policy = baseline(spec, context)
        self.server.reset_stats()
        started = time.perf_counter()
        tracker = FidelityTracker(
            session,
            self.excluded_tools,
            self.references(session),
            has_recall=spec.kind == "forge",
        )
        meter = CostMeter()
        final: tuple[int, list[Message]] | None = None
        total = uncached = cached = output = peak = over = requests = 0
        try:
            for index, message in enumerate(session.messages):
                if message.role != "assistant":
                    continue
                output += self.tokenizer.output_tokens(message)
                if index == 0:
                    continue  # nothing to send before a session's first message
                history = session.messages[:index]
                request = await policy.prepare(history)
                _check_valid(session, spec, index, history, request)
                segments = self.tokenizer.request(self.tools, request)
                size = prompt_tokens(segments)
                lost = tracker.observe(index, request)
                hit = meter.request(
                    segments,
                    bool(request) and request[0].role == "system",
                    [self._refetch(session, i, i in tracker.reachable) for i in lost],
                    roles=[message.role for message in request],
                )
                policy.sent(size)
                requests += 1
                total += size
                cached += hit
                uncached += size - hit
                peak = max(peak, size)
                over += size > resolved
                final = (index, request)
        finally:
            await policy.aclose()
        seconds = time.perf_counter() - started
        if final is None:
            raise RuntimeError(f"{session.name}: no request to replay")
        fidelity = tracker.finish(*final)
        stats = self.server.stats()
        if stats["in_flight"]:
            raise RuntimeError(f"{session.name}/{spec.name}: summaries still in flight")
        summary_in, summary_out = stats["prompt_tokens"], stats["completion_tokens"]
        costs = meter.costs(output, summary_in, summary_out)
        cost = costs["cost_usd_openai"]
        return Row(
            session=session.name,
            budget=resolved,
            budget_label=budget_label(budget, resolved),
            policy=spec.name,
            requests=requests,
            prompt_tokens=total,
            uncached_prompt_tokens=uncached,
            cached_prompt_tokens=cached,
            agent_output_tokens=output,
            cost_usd=cost,
            summary_calls=stats["requests"],
            summary_input_tokens=summary_in,
            summary_output_tokens=summary_out,
            peak_prompt_tokens=peak,
            over_budget=over,
            user_verbatim=fidelity.user_verbatim,
            user_total=fidelity.user_total,
            excluded_verbatim=fidelity.excluded_verbatim,
            excluded_total=fidelity.excluded_total,
            newest_tools_verbatim=fidelity.newest_tools_verbatim,
            latest_user_intact=fidelity.latest_user_intact,
            paths_recalled=fidelity.paths_recalled,
            paths_total=fidelity.paths_total,
            seconds=seconds,
            strategy_runs=dict(getattr(policy, "runs", {})),
            **costs,
            recall_requests=meter.recall_requests,
            cache_read_tokens=meter.agent.anthropic_read,
            cache_write_tokens=meter.agent.anthropic_written,
            referenced_outputs=fidelity.referenced_outputs,
            referenced_lost=fidelity.referenced_lost,
            referenced_tokens=fidelity.referenced_tokens,
            referenced_tokens_missing=fidelity.referenced_tokens_missing,
            user_requests_verbatim=fidelity.user_requests_verbatim,
            user_requests_total=fidelity.user_requests_total,
            origin=session.origin,
            unrecoverable_lost=fidelity.unrecoverable_lost,
            trail_probes_hit=fidelity.trail_probes_hit,
            trail_probes_total=fidelity.trail_probes_total,
        )

    def _refetch(self, session: Session, index: int, by_key: bool) -> Refetch:
        """Fetching the lost output at `index` again, at its real tokens."""
        call, result = refetch_messages(session, index, by_key)
        return Refetch(
            (self.tokenizer.message(call), self.tokenizer.message(result)),
            self.tokenizer.output_tokens(call),
        )

    def references(self, session: Session) -> dict[int, Reference]:
        """The session's referenced outputs (computed once per session)."""
        known = self._references.get(id(session))
        if known is None or known[0] is not session:
            known = self._references[id(session)] = (session, references(session))
        return known[1]

    async def aclose(self) -> None:
        """Close the summarizer's HTTP client."""
        await self.summary_provider.aclose()


def _check_valid(
    session: Session,
    spec: PolicySpec,
    index: int,
    history: Sequence[Message],
    request: Sequence[Message],
) -> None:
    """A policy must never turn a valid history into an invalid request."""
    problems = Conversation(request).problems()
    if problems and not Conversation(history).problems():
        raise RuntimeError(
            f"{spec.name} sent an invalid request in {session.name} before message {index}: "
            + "; ".join(problems[:3])
        )


# ---------------------------------------------------------------------------------------------
# Tables


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.3f}" if base else "—"


def _sum_rows(rows: Sequence[Row], session: str) -> Row:
    """Rows of one policy and budget added up (fidelity counts too; the peak a maximum,
    booleans all-of, strategy runs merged)."""
    first = rows[0]
    values: dict[str, object] = {}
    for item in fields(Row):
        name = item.name
        if name in ("budget", "budget_label", "policy"):
            values[name] = getattr(first, name)
        elif name == "origin":
            values[name] = first.origin if all(r.origin == first.origin for r in rows) else ""
        elif name == "peak_prompt_tokens":
            values[name] = max(r.peak_prompt_tokens for r in rows)
        elif name == "latest_user_intact":
            values[name] = all(r.latest_user_intact for r in rows)
        elif name == "strategy_runs":
            values[name] = dict(sum((Counter(r.strategy_runs) for r in rows), Counter()))
        elif name != "session":
            values[name] = sum(getattr(r, name) for r in rows)
    return Row(session=session, **values)  # type: ignore[arg-type]


TABLE_HEADER = (
    "session",
    "policy",
    "prompt tok",
    "÷none",
    "÷mask",
    "+summary in ÷mask",
    "uncached",
    "÷none",
    "÷mask",
    "cost $",
    "÷none",
    "÷mask",
    "summaries (in/out tok)",
    "peak",
    "÷none",
    "over",
    "instr.",
    "excluded",
    "newest 3",
    "latest user",
    "paths",
)


def _cells(row: Row, none: Row | None, masking: Row | None) -> list[str]:
    def ratio(attribute: str, base: Row | None) -> str:
        if base is None:
            return "—"
        return _ratio(getattr(row, attribute), getattr(base, attribute))

    plus_masking = (
        _ratio(row.agent_plus_summary_input, masking.agent_plus_summary_input) if masking else "—"
    )
    return [
        row.session,
        row.policy,
        f"{row.prompt_tokens:,}",
        ratio("prompt_tokens", none),
        ratio("prompt_tokens", masking),
        plus_masking,
        f"{row.uncached_prompt_tokens:,}",
        ratio("uncached_prompt_tokens", none),
        ratio("uncached_prompt_tokens", masking),
        f"{row.cost_usd:.4f}",
        ratio("cost_usd", none),
        ratio("cost_usd", masking),
        f"{row.summary_calls} ({row.summary_input_tokens:,}/{row.summary_output_tokens:,})",
        f"{row.peak_prompt_tokens:,}",
        ratio("peak_prompt_tokens", none),
        str(row.over_budget),
        f"{row.user_verbatim}/{row.user_total}",
        f"{row.excluded_verbatim}/{row.excluded_total}",
        f"{row.newest_tools_verbatim}/{row.requests}",
        "yes" if row.latest_user_intact else "no",
        f"{row.paths_recalled}/{row.paths_total}",
    ]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table; every column but the first two right-aligned."""
    align = ["---" if index < 2 else "--:" for index in range(len(header))]
    lines = [header, align, *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def _mark(text: str, ok: bool) -> str:
    return f"{text} {'✓' if ok else '✗'}"


def targets_section(rows: Sequence[Row], policy: str) -> list[str]:
    """The Context engine v2 targets (issue 9) for one forge policy, per budget, over the
    trajectories (each target on their sum, the per-session ones on each) and the combined
    session on its own."""
    header = (
        "budget",
        "group",
        "(prompt+summary in) ÷ masking ≤ 0.9",
        "worst ÷ none where none > budget ≤ 0.6",
        "uncached ÷ masking ≤ 1",
        "over budget = 0",
        "cost not above a larger budget's",
        "instructions verbatim",
    )
    find = {(r.session, r.budget, r.policy): r for r in rows}
    budgets = sorted({r.budget for r in rows})
    labels = {r.budget: r.budget_label for r in rows}
    table = []
    for budget in budgets:
        for group in ("all trajectories", COMBINED):
            if group == COMBINED:
                sessions = [COMBINED] if (COMBINED, budget, policy) in find else []
            else:
                sessions = list(
                    dict.fromkeys(
                        r.session for r in rows if r.session != COMBINED and r.budget == budget
                    )
                )
            mine = [find[(s, budget, policy)] for s in sessions if (s, budget, policy) in find]
            nones = [find[(s, budget, "none")] for s in sessions if (s, budget, "none") in find]
            masks = [
                find[(s, budget, "masking")] for s in sessions if (s, budget, "masking") in find
            ]
            if not mine or len(nones) != len(mine) or len(masks) != len(mine):
                continue
            total = _sum_rows(mine, group)
            mask_total = _sum_rows(masks, group)
            spent = _ratio(total.agent_plus_summary_input, mask_total.agent_plus_summary_input)
            worst = [
                row.agent_plus_summary_input / none.prompt_tokens
                for row, none in zip(mine, nones, strict=True)
                if none.peak_prompt_tokens > budget and none.prompt_tokens
            ]
            uncached = _ratio(total.uncached_prompt_tokens, mask_total.uncached_prompt_tokens)
            monotone = [
                row.session
                for row in mine
                for larger in budgets
                if larger > budget
                and (row.session, larger, policy) in find
                and row.cost_usd > find[(row.session, larger, policy)].cost_usd
            ]
            table.append(
                [
                    labels[budget],
                    group,
                    _mark(spent, spent != "—" and float(spent) <= 0.9),
                    _mark(f"{max(worst):.3f}", max(worst) <= 0.6) if worst else "—",
                    _mark(uncached, uncached != "—" and float(uncached) <= 1.0),
                    _mark(str(total.over_budget), total.over_budget == 0),
                    _mark(
                        "yes" if not monotone else "no: " + ", ".join(dict.fromkeys(monotone)),
                        not monotone,
                    ),
                    _mark(
                        f"{total.user_verbatim}/{total.user_total}",
                        total.user_verbatim == total.user_total,
                    ),
                ]
            )
    return [f"### Context engine v2 targets for `{policy}`", "", markdown_table(header, table)]


def _tiers_section(
    rows: Sequence[Row], policies: Sequence[str], budgets: Sequence[tuple[int, str]]
) -> list[str]:
    """Which of Forge's tiers ran, per session and budget (runs that changed something)."""
    table = []
    for policy in policies:
        for session in dict.fromkeys(r.session for r in rows):
            for budget, label in budgets:
                match = [
                    r
                    for r in rows
                    if r.session == session and r.policy == policy and r.budget == budget
                ]
                if not match:
                    continue
                runs = match[0].strategy_runs
                text = ", ".join(f"{name} {count}" for name, count in sorted(runs.items()))
                table.append([session, policy, label, text or "—"])
    if not table:
        return []
    header = ["session", "policy", "budget", "runs by tier"]
    return ["", "### Forge's tiers at work", "", markdown_table(header, table)]


def render_markdown(rows: Sequence[Row], policies: Sequence[str]) -> str:
    """The section: per budget, the trajectories' total and the combined session by policy;
    then every session's cost by budget."""
    budgets = list(dict.fromkeys((r.budget, r.budget_label) for r in rows))
    individual = [r for r in rows if r.session != COMBINED]
    parts = [
        "## Replay: what each context policy costs and keeps",
        "",
        f"Prices ($ per million tokens): {MAIN.model} {MAIN.input} input, {MAIN.cached_input} "
        f"cached input, {MAIN.output} output; summaries on {SUMMARIZATION.model} "
        f"{SUMMARIZATION.input} input, {SUMMARIZATION.output} output, uncached. "
        "Prompt tokens include Forge's tool definitions. Ratios are to `none` and to `masking` "
        "in the same group. Fidelity: instructions and excluded-tool messages verbatim in the "
        "final request; newest 3 tool outputs verbatim (requests where they were / requests); "
        "latest user message verbatim in every request; paths touched found in the final "
        "request.",
    ]
    for budget, label in budgets:
        table: list[list[str]] = []
        groups: list[tuple[str, list[Row]]] = []
        if individual:
            total_rows = []
            for policy in policies:
                matching = [r for r in individual if r.budget == budget and r.policy == policy]
                if matching:
                    total_rows.append(_sum_rows(matching, "all trajectories"))
            groups.append(("all trajectories", total_rows))
        sessions = [r.session for r in rows if r.session != COMBINED]
        if any(r.session == COMBINED for r in rows):
            sessions.append(COMBINED)
        for session in dict.fromkeys(sessions):
            groups.append(
                (session, [r for r in rows if r.budget == budget and r.session == session])
            )
        for _, group in groups:
            by_policy = {r.policy: r for r in group}
            for policy in policies:
                if policy in by_policy:
                    table.append(
                        _cells(by_policy[policy], by_policy.get("none"), by_policy.get("masking"))
                    )
        parts += ["", f"### Budget {label}", "", markdown_table(TABLE_HEADER, table)]
    for policy in policies:
        if policy.startswith("forge") and "masking" in policies and "none" in policies:
            parts += ["", *targets_section(rows, policy)]
    parts += replay_tables.section(rows, policies)
    parts += replay_targets.section(rows, policies)
    parts += _tiers_section(rows, [p for p in policies if p.startswith("forge")], budgets)
    cost_header = ["session", "policy", *(label for _, label in budgets)]
    cost_rows = []
    for session in dict.fromkeys(r.session for r in rows):
        for policy in policies:
            cells = [session, policy]
            for budget, _ in budgets:
                match = [
                    r
                    for r in rows
                    if r.session == session and r.policy == policy and r.budget == budget
                ]
                cells.append(f"{match[0].cost_usd:.4f}" if match else "—")
            cost_rows.append(cells)
    parts += [
        "",
        "### Cost per session ($) by budget",
        "",
        markdown_table(cost_header, cost_rows),
    ]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------------------------
# Command line


def _budget(text: str) -> int | None:
    if text.strip().lower() == "default":
        return None
    value = text.strip().lower().replace(",", "").replace("_", "")
    number = int(float(value[:-1]) * 1000) if value.endswith("k") else int(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"a budget must be positive: {text!r}")
    return number


def parser() -> argparse.ArgumentParser:
    """The command line of `python -m bench.replay`."""
    result = argparse.ArgumentParser(
        prog="python -m bench.replay",
        description="Replay sessions under context policies; print cost and fidelity tables.",
    )
    result.add_argument(
        "files",
        nargs="*",
        type=Path,
        help="session files (*.messages.json) or folders of them (default: the shared corpus, "
        "then bench/corpus/; plus the combined session)",
    )
    result.add_argument(
        "--budget",
        action="append",
        type=_budget,
        help="prompt budget in tokens, e.g. 8000 or 8k, or 'default' (repeatable; "
        "default: 8k, 12k, 16k, 32k, 64k, default)",
    )
    result.add_argument(
        "--policy",
        action="append",
        help="none, masking, summarize-at-90, eager, forge, or forge:key=value,... "
        "(repeatable; default: the first five)",
    )
    result.add_argument("--no-combined", action="store_true", help="leave out the combined session")
    result.add_argument(
        "--quick",
        action="store_true",
        help="budgets 8k, 32k and default only (unless --budget is given): about half the time",
    )
    result.add_argument("--json", type=Path, help="also write every row to this JSON file")
    result.add_argument("--main-model", default=MAIN.model, help=argparse.SUPPRESS)
    result.add_argument("--summary-model", default=SUMMARIZATION.model, help=argparse.SUPPRESS)
    return result


def session_files(paths: Sequence[Path]) -> list[Path]:
    """The files given, each folder among them as its `*.messages.json` files (sorted);
    `FileNotFoundError` for a path that does not exist or a folder without sessions."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.messages.json"))
            if not found:
                raise FileNotFoundError(f"no sessions (*.messages.json) in {path}")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"session file or folder not found: {path}")
    return files


def load_sessions(files: Sequence[Path], with_combined: bool) -> list[Session]:
    """The sessions to replay: the files and folders given, else the shared corpus then the
    repository's (`bench/corpus/`); then the combined session: the shared corpus's sessions
    back to back by default, all the given ones otherwise."""
    if files:
        sessions = [load_session(path) for path in session_files(files)]
        together = sessions
    else:
        together = [load_session(path) for path in trajectory_files()]
        sessions = together + [load_session(path) for path in session_files([BENCH_CORPUS])]
    if with_combined and len(together) > 1:
        sessions.append(combine(together))
    return sessions


async def replay_all(
    sessions: Sequence[Session],
    specs: Sequence[PolicySpec],
    budgets: Sequence[int | None],
    main_model: str = MAIN.model,
    summary_model: str = SUMMARIZATION.model,
) -> list[Row]:
    """Every session x budget x policy, against one summarizer process."""
    rows = []
    with ServerProcess(mode="summarizer", latency=SUMMARIZER_LATENCY) as server:
        replay = Replay(server, main_model, summary_model)
        try:
            default = await replay.default_budget()
            resolved = {budget: budget or default for budget in budgets}
            for budget in budgets:
                for session in sessions:
                    for spec in specs:
                        rows.append(await replay.run(session, spec, budget, resolved[budget]))
        finally:
            await replay.aclose()
    return rows


def run(argv: list[str] | None = None) -> str:
    """Run the replay with these arguments and return the section as markdown; raises on any
    failure (a missing corpus included)."""
    args = parser().parse_args(argv if argv is not None else [])
    names = args.policy or list(DEFAULT_POLICIES)
    specs = [parse_policy(name) for name in dict.fromkeys(names)]
    budgets = list(dict.fromkeys(args.budget or (QUICK_BUDGETS if args.quick else DEFAULT_BUDGETS)))
    sessions = load_sessions(args.files, not args.no_combined)
    rows = asyncio.run(replay_all(sessions, specs, budgets, args.main_model, args.summary_model))
    if args.json is not None:
        args.json.write_text(
            json.dumps([asdict(row) for row in rows], indent=1) + "\n", encoding="utf-8"
        )
    return render_markdown(rows, [spec.name for spec in specs])


def main(argv: Sequence[str] | None = None) -> int:
    """Print the section; 1 (with the error) on failure."""
    try:
        print(run(list(argv) if argv is not None else sys.argv[1:]), end="")
    except Exception as error:
        print(f"bench.replay failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
