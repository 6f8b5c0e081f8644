"""What a session has cost in money, from the usage the server reported (docs/adr/0029).

`CostLedger` (one per agent, so one per session run) adds up tokens per model in two kinds:
"agent" (the conversation's requests) and "summarization" (every summary request, made
through the context manager's clone of the provider). Only usage the server reported counts;
a request without a usage report adds nothing. Prompt tokens the server reports as cached
(`cached_tokens`) are priced at the model's cached price, the rest at its input price.

`CostReport` prices a ledger with a `PriceTable`: a model the table does not list has no
price, and every sum it is part of is `None` ("unknown"), never a guess.

Compaction saving (an estimate, stated with the figure): each agent request after a
compaction would, unmanaged, have carried the tokens compaction had removed so far (the
net `tokens_before - tokens_after` of every finished or fallen-back run: summaries, masks,
caps and pruning). Those tokens are priced at the agent model's input price, uncached. It
ignores that an unmanaged conversation would overflow the window, and provider caching.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from forge.config.prices import ModelPrice, PriceTable
from forge.context.events import SummarizationCompleted, SummarizationFailed
from forge.llm.stream import Usage

Kind = Literal["agent", "summarization"]

SAVING_METHOD = (
    "Estimate: every agent request after a compaction would have carried, unmanaged, the "
    "tokens compaction had removed by then (net of the summaries added); those tokens are "
    "priced at the agent model's input price, uncached. Window overflow and provider caching "
    "are ignored."
)


@dataclass
class TokenTotals:
    """Tokens one model used in one kind of request."""

    requests: int = 0
    prompt: int = 0
    cached: int = 0
    output: int = 0

    def add(self, usage: Usage) -> None:
        """Count one request's reported usage."""
        self.requests += 1
        self.prompt += usage.prompt_tokens
        self.cached += min(usage.cached_tokens, usage.prompt_tokens)
        self.output += usage.completion_tokens

    @property
    def uncached(self) -> int:
        """Prompt tokens not served from the cache."""
        return self.prompt - self.cached


@dataclass
class CostLedger:
    """The session's tokens by kind and model, and what compaction kept out of requests."""

    agent: dict[str, TokenTotals] = field(default_factory=dict)
    summarization: dict[str, TokenTotals] = field(default_factory=dict)
    removed_tokens: int = 0
    """Tokens compaction has removed from the conversation so far (net)."""
    saved_tokens: dict[str, int] = field(default_factory=dict)
    """Per agent model: prompt tokens requests did not carry thanks to compaction."""
    sent_tokens: int = 0
    """Prompt tokens of every agent request."""

    def record_agent(self, model: str, usage: Usage) -> None:
        """An agent request on `model` reported `usage`."""
        self.agent.setdefault(model, TokenTotals()).add(usage)
        self.sent_tokens += usage.prompt_tokens
        if self.removed_tokens:
            self.saved_tokens[model] = self.saved_tokens.get(model, 0) + self.removed_tokens

    def agent_tokens(self) -> tuple[int, int]:
        """Prompt and output tokens of every agent request so far (all models)."""
        totals = self.agent.values()
        return sum(t.prompt for t in totals), sum(t.output for t in totals)

    def to_record(self) -> dict[str, Any]:
        """The ledger as JSON-ready data (kept in the session file: a resumed session's cost
        goes on from where it was)."""
        return {
            "agent": {model: vars(totals).copy() for model, totals in self.agent.items()},
            "summarization": {
                model: vars(totals).copy() for model, totals in self.summarization.items()
            },
            "removed_tokens": self.removed_tokens,
            "saved_tokens": dict(self.saved_tokens),
            "sent_tokens": self.sent_tokens,
        }

    @classmethod
    def from_record(cls, record: Any) -> CostLedger:
        """The ledger `to_record` wrote; what is unreadable in it counts as nothing."""
        ledger = cls()
        if not isinstance(record, dict):
            return ledger
        for kind in ("agent", "summarization"):
            by_model = record.get(kind)
            if isinstance(by_model, dict):
                getattr(ledger, kind).update(
                    {str(model): _totals(fields) for model, fields in by_model.items()}
                )
        ledger.removed_tokens = _count(record.get("removed_tokens"))
        saved = record.get("saved_tokens")
        if isinstance(saved, dict):
            ledger.saved_tokens = {str(model): _count(tokens) for model, tokens in saved.items()}
        ledger.sent_tokens = _count(record.get("sent_tokens"))
        return ledger

    def record_summary(self, model: str, usage: Usage) -> None:
        """A summarization request on `model` reported `usage`."""
        self.summarization.setdefault(model, TokenTotals()).add(usage)

    def observe(self, event: object) -> None:
        """Take note of a compaction among the agent's events (others are ignored)."""
        if isinstance(event, SummarizationCompleted | SummarizationFailed) and event.tokens_before:
            self.removed_tokens += max(0, event.tokens_before - event.tokens_after)

    def report(self, prices: PriceTable) -> CostReport:
        """The ledger priced with `prices`."""
        kinds: tuple[tuple[Kind, dict[str, TokenTotals]], ...] = (
            ("agent", self.agent),
            ("summarization", self.summarization),
        )
        lines = [
            _line(kind, model, totals, prices.lookup(model))
            for kind, by_model in kinds
            for model, totals in by_model.items()
        ]
        saved: float | None = 0.0
        for model, tokens in self.saved_tokens.items():
            price = prices.lookup(model)
            saved = None if saved is None or price is None else saved + price.cost(tokens, 0, 0)
        return CostReport(
            tuple(lines),
            saved_tokens=sum(self.saved_tokens.values()),
            sent_tokens=self.sent_tokens,
            saved_dollars=saved,
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _totals(fields: Any) -> TokenTotals:
    if not isinstance(fields, dict):
        return TokenTotals()
    return TokenTotals(
        *(_count(fields.get(name)) for name in ("requests", "prompt", "cached", "output"))
    )


@dataclass(frozen=True)
class CostLine:
    """One model's tokens and dollars in one kind of request."""

    kind: Kind
    model: str
    requests: int
    prompt: int
    cached: int
    output: int
    dollars: float | None
    """None: the model has no price."""


def _line(kind: Kind, model: str, totals: TokenTotals, price: ModelPrice | None) -> CostLine:
    dollars = price.cost(totals.uncached, totals.cached, totals.output) if price else None
    return CostLine(
        kind, model, totals.requests, totals.prompt, totals.cached, totals.output, dollars
    )


def _sum(values: list[float | None]) -> float | None:
    total = 0.0
    for value in values:
        if value is None:
            return None
        total += value
    return total


@dataclass(frozen=True)
class CostReport:
    """A priced ledger: lines per kind and model, sums, and the compaction saving."""

    lines: tuple[CostLine, ...] = ()
    saved_tokens: int = 0
    sent_tokens: int = 0
    saved_dollars: float | None = 0.0

    def dollars(self, kind: Kind | None = None) -> float | None:
        """Dollars of `kind` (all kinds when None); None when any model in it has no price."""
        return _sum([line.dollars for line in self.lines if kind is None or line.kind == kind])

    def shown(self, kind: Kind | None = None, *, unknown: str = "unknown") -> str:
        """Dollars of `kind` for people: "$0.0027"; with models the price table does not
        list, what the priced ones cost plus `unknown` ("$0.0027 + unknown"), so one local
        model does not hide what the others cost; `unknown` alone when none is priced."""
        lines = [line for line in self.lines if kind is None or line.kind == kind]
        known = [line.dollars for line in lines if line.dollars is not None]
        if len(known) == len(lines):
            return format_dollars(sum(known))
        if not known:
            return unknown
        return f"{format_dollars(sum(known))} + {unknown}"

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain data (the jsonl `turn_finished` record's `cost`); dollars are
        null when unknown."""
        return {
            "currency": "USD",
            "total": _rounded(self.dollars()),
            "agent": _rounded(self.dollars("agent")),
            "summarization": _rounded(self.dollars("summarization")),
            "models": [
                {
                    "kind": line.kind,
                    "model": line.model,
                    "requests": line.requests,
                    "input_tokens": line.prompt,
                    "cached_tokens": line.cached,
                    "output_tokens": line.output,
                    "dollars": _rounded(line.dollars),
                }
                for line in self.lines
            ],
            "compaction_saved_tokens": self.saved_tokens,
            "compaction_saved": _rounded(self.saved_dollars),
        }

    def summary_line(self) -> str:
        """One line: total, agent and summarization dollars."""
        return (
            f"cost {self.shown()} (agent {self.shown('agent')}, summarization "
            f"{self.shown('summarization')})"
        )

    def details_markdown(self) -> str:
        """The `/cost` report: per model, tokens in/cached/out and dollars; the saving."""
        rows = [
            f"| {line.kind} | `{line.model}` | {line.requests} | {line.prompt:,} | "
            f"{line.cached:,} | {line.output:,} | {format_dollars(line.dollars)} |"
            for line in self.lines
        ]
        table = (
            "| kind | model | requests | in | cached | out | cost |\n"
            "|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
            if rows
            else "No request has reported usage yet."
        )
        saving = (
            f"Compaction kept **{self.saved_tokens:,}** prompt tokens out of this session's "
            f"requests (they sent {self.sent_tokens:,}): about "
            f"**{format_dollars(self.saved_dollars)}** saved, against "
            f"{self.shown('summarization')} spent on summarization.\n\n"
            f"_{SAVING_METHOD}_"
        )
        return (
            f"**Session cost: {self.shown()}** (agent {self.shown('agent')}, summarization "
            f"{self.shown('summarization')}; USD, from the usage the server reported; "
            f"unknown: a model the price table does not list)\n\n{table}\n\n{saving}"
        )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def format_dollars(value: float | None) -> str:
    """ "$1.23", "$0.0042" below a cent, "unknown" for None."""
    if value is None:
        return "unknown"
    if value and value < 0.01:
        return f"${value:.4f}"
    return f"${value:.2f}"
