"""What a session has cost in money, from the usage the server reported (docs/adr/0029).

`CostLedger` (one per agent, so one per session run) adds up tokens per model in three kinds:
"agent" (the conversation's requests), "summarization" (every summary request, made
through the context manager's clone of the provider) and "subagent" (every request of a child
agent a `task` call ran, its summaries included, per agent name; docs/adr/0045). Only usage
the server reported counts, and a request without a usage report (or with one that failed
validation) counts Forge's own token counts instead, marked estimated (`Usage.estimated`,
docs/adr/0047): every sum it is part of shows as an estimate ("~$0.0031"). Prompt tokens the
server reports as cached (`cached_tokens`, cache reads) are priced at the model's cached price,
tokens written to the cache (`cache_write_tokens`, Anthropic) at its cache-write price, the
rest at its input price.

`CostReport` prices a ledger with a `PriceTable`: a model the table does not list has no
price, and every sum it is part of is `None` ("unknown"), never a guess.

Compaction saving (an estimate, stated with the figure): each agent request after a
compaction would, unmanaged, have carried the tokens compaction had removed so far (the
net `tokens_before - tokens_after` of every finished or fallen-back run: summaries, masks,
caps and pruning). Those tokens are priced at the agent model's input price, uncached. It
ignores that an unmanaged conversation would overflow the window, and provider caching.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from forge.config.prices import ModelPrice, PriceTable
from forge.context.events import SummarizationCompleted, SummarizationFailed
from forge.llm.stream import Usage
from forge.llm.usage_bounds import MAX_TOKENS_PER_REQUEST, describe, is_token_count

logger = logging.getLogger(__name__)

Kind = Literal["agent", "summarization", "subagent"]

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
    cache_write: int = 0
    """Prompt tokens written to the provider's cache (part of `prompt`)."""
    estimated: int = 0
    """Requests whose usage Forge estimated (the server reported none)."""

    def add(self, usage: Usage) -> None:
        """Count one request's reported usage (one with an untrusted count adds nothing:
        providers check usage as they parse it, this is the last guard before the price)."""
        counts = (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens)
        if not all(is_token_count(count) for count in counts):
            logger.warning("Ignored a usage report with a token count outside 0…10⁹")
            return
        self.requests += 1
        self.estimated += int(usage.estimated)
        self.prompt += usage.prompt_tokens
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        self.cached += cached
        self.cache_write += min(usage.cache_write_tokens, usage.prompt_tokens - cached)
        self.output += usage.completion_tokens

    @property
    def uncached(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return max(0, self.prompt - self.cached - self.cache_write)


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
    subagents: dict[str, dict[str, TokenTotals]] = field(default_factory=dict)
    """Per child, per model: the tokens of the children's requests. A child is keyed by its
    label, "AGENT: first words of its prompt" (one per `task` call, `child_label`), or by its
    agent's name alone in sessions recorded before (docs/adr/0048)."""

    def record_subagent(self, agent: str, model: str, usage: Usage) -> None:
        """A request of the child labelled `agent` (its own or a summary) on `model`
        reported `usage`."""
        self.subagents.setdefault(agent, {}).setdefault(model, TokenTotals()).add(usage)

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
            **({"subagents": self._subagents_record()} if self.subagents else {}),
        }

    def _subagents_record(self) -> dict[str, Any]:
        return {
            agent: {model: vars(totals).copy() for model, totals in by_model.items()}
            for agent, by_model in self.subagents.items()
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
        ledger.removed_tokens = _count(record.get("removed_tokens"), "removed_tokens")
        saved = record.get("saved_tokens")
        if isinstance(saved, dict):
            ledger.saved_tokens = {
                str(model): _count(tokens, "saved_tokens") for model, tokens in saved.items()
            }
        ledger.sent_tokens = _count(record.get("sent_tokens"), "sent_tokens")
        children = record.get("subagents")
        if isinstance(children, dict):
            ledger.subagents = {
                str(agent): {str(model): _totals(fields) for model, fields in by_model.items()}
                for agent, by_model in children.items()
                if isinstance(by_model, dict)
            }
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
        lines += [
            _line("subagent", model, totals, prices.lookup(model), child=child)
            for child, by_model in self.subagents.items()
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
            removed_tokens=self.removed_tokens,
            saved_dollars=saved,
        )


ESTIMATE_MARK = "~"
"""What precedes a sum that holds an estimated request ("~$0.0031")."""

MAX_RECORDED_TOKENS = MAX_TOKENS_PER_REQUEST * 1_000_000
"""A session record's totals: a million requests of the largest trusted size."""


def _count(value: Any, field: str = "count") -> int:
    if is_token_count(value, MAX_RECORDED_TOKENS):
        return int(value)
    if value is not None:
        logger.warning("Ignored the session's cost record %s: %s", field, describe(value))
    return 0


def _totals(fields: Any) -> TokenTotals:
    if not isinstance(fields, dict):
        return TokenTotals()
    totals = TokenTotals(
        *(
            _count(fields.get(name), name)
            for name in ("requests", "prompt", "cached", "output", "cache_write", "estimated")
        )
    )
    if totals.cached > totals.prompt:
        logger.warning(
            "Ignored the session's cost record cached tokens: %d cached of %d prompt tokens",
            totals.cached,
            totals.prompt,
        )
        totals.cached = 0
    if totals.cache_write > totals.prompt - totals.cached:
        logger.warning("Ignored the session's cost record cache-write tokens (above prompt)")
        totals.cache_write = 0
    return totals


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
    cache_write: int = 0
    """Prompt tokens written to the cache (Anthropic)."""
    agent: str = ""
    """The child agent's name for a "subagent" line."""
    estimated: int = 0
    """Requests whose usage Forge estimated from its own counts (no usage reported)."""
    child: str = ""
    """The child's label for a "subagent" line: "explore: find the parser …" (the agent's
    name alone in sessions recorded before)."""

    @property
    def label(self) -> str:
        """The kind as a report shows it ("subagent explore: find the parser …" for a
        child's line)."""
        return f"{self.kind} {self.child or self.agent}" if self.agent else self.kind


def child_label(agent: str, prompt: str, taken: Collection[str] = (), words: int = 5) -> str:
    """How the cost of one `task` call's child is listed: its agent and the first `words`
    words of its prompt, numbered " (2)", " (3)" … when that label is in `taken`."""
    parts = prompt.split()
    base = f"{agent}: {' '.join(parts[:words])}{' …' if len(parts) > words else ''}"
    label, number = base, 1
    while label in taken:
        number += 1
        label = f"{base} ({number})"
    return label


def _line(
    kind: Kind, model: str, totals: TokenTotals, price: ModelPrice | None, *, child: str = ""
) -> CostLine:
    dollars = (
        price.cost(totals.uncached, totals.cached, totals.output, totals.cache_write)
        if price
        else None
    )
    return CostLine(
        kind,
        model,
        totals.requests,
        totals.prompt,
        totals.cached,
        totals.output,
        dollars,
        totals.cache_write,
        agent=child.partition(": ")[0],  # the agent's name (agent names hold no colon)
        estimated=min(totals.estimated, totals.requests),
        child=child,
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
    removed_tokens: int = 0
    """Tokens compaction has removed from the conversation so far (net)."""

    def cache_tokens(self) -> tuple[int, int]:
        """Prompt tokens read from and written to the provider's cache, all requests."""
        return (
            sum(line.cached for line in self.lines),
            sum(line.cache_write for line in self.lines),
        )

    def dollars(self, kind: Kind | None = None) -> float | None:
        """Dollars of `kind` (all kinds when None); None when any model in it has no price."""
        return _sum([line.dollars for line in self.lines if kind is None or line.kind == kind])

    def shown(
        self, kind: Kind | None = None, *, unknown: str = "unknown", precise: bool = False
    ) -> str:
        """Dollars of `kind` for people: "$0.0027"; with models the price table does not
        list, what the priced ones cost plus `unknown` ("$0.0027 + unknown"), so one local
        model does not hide what the others cost; `unknown` alone when none is priced."""
        lines = [line for line in self.lines if kind is None or line.kind == kind]
        known = [line.dollars for line in lines if line.dollars is not None]
        about = ESTIMATE_MARK if self.estimated_requests(kind) else ""
        if len(known) == len(lines):
            return about + format_dollars(sum(known), precise=precise)
        if not known:
            return unknown
        return f"{about}{format_dollars(sum(known), precise=precise)} + {unknown}"

    def estimated_requests(self, kind: Kind | None = None) -> int:
        """Requests of `kind` (all when None) whose usage Forge estimated."""
        return sum(line.estimated for line in self.lines if kind is None or line.kind == kind)

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain data (the jsonl `turn_finished` record's `cost`); dollars are
        null when unknown."""
        return {
            "currency": "USD",
            "total": _rounded(self.dollars()),
            "estimated": bool(self.estimated_requests()),
            "agent": _rounded(self.dollars("agent")),
            "summarization": _rounded(self.dollars("summarization")),
            **({"subagents": self.subagents_dict()} if self.has_subagents else {}),
            "models": [
                {
                    "kind": line.kind,
                    **({"agent": line.agent} if line.agent else {}),
                    "model": line.model,
                    "requests": line.requests,
                    "input_tokens": line.prompt,
                    "cached_tokens": line.cached,
                    "cache_write_tokens": line.cache_write,
                    "output_tokens": line.output,
                    "dollars": _rounded(line.dollars),
                    **({"estimated_requests": line.estimated} if line.estimated else {}),
                }
                for line in self.lines
            ],
            "compaction_saved_tokens": self.saved_tokens,
            "compaction_saved": _rounded(self.saved_dollars),
        }

    @property
    def has_subagents(self) -> bool:
        """Whether a child agent's request reported usage."""
        return any(line.kind == "subagent" for line in self.lines)

    def subagent_names(self) -> list[str]:
        """The child agents with usage, in the order they first appear."""
        return list(dict.fromkeys(line.agent for line in self.lines if line.kind == "subagent"))

    def subagent_dollars(self, agent: str) -> float | None:
        """What child agent `agent`'s requests cost (None: a model without a price)."""
        return _sum([line.dollars for line in self.lines if line.agent == agent])

    def subagents_dict(self) -> list[dict[str, Any]]:
        """Per child agent: requests, tokens and dollars (the jsonl cost's `subagents`)."""
        result = []
        for agent in self.subagent_names():
            lines = [line for line in self.lines if line.agent == agent]
            result.append(
                {
                    "agent": agent,
                    "requests": sum(line.requests for line in lines),
                    "input_tokens": sum(line.prompt for line in lines),
                    "cached_tokens": sum(line.cached for line in lines),
                    "output_tokens": sum(line.output for line in lines),
                    "dollars": _rounded(self.subagent_dollars(agent)),
                }
            )
        return result

    def summary_line(self) -> str:
        """One line: total, agent, summarization (and children's) dollars."""
        children = f", subagents {self.shown('subagent')}" if self.has_subagents else ""
        return (
            f"cost {self.shown()} (agent {self.shown('agent')}, summarization "
            f"{self.shown('summarization')}{children})"
        )

    def saving_sentence(self) -> str:
        """What compaction did for the session's requests, in words that cannot be misread:
        the tokens it removed from later requests, what those requests sent instead, and the
        dollars on both sides ("unknown" where a price is missing, never "$0.00")."""
        if self.summarization_requests:
            spent = f"{self.shown('summarization')} spent on summarization"
        else:
            spent = "no summarization requests"
        if not self.saved_tokens and self.removed_tokens:
            return (
                f"Compaction removed **{self.removed_tokens:,}** tokens from the conversation; "
                f"no request has been sent since ({spent})."
            )
        if not self.saved_tokens:
            return f"Compaction has not removed tokens from any request yet ({spent})."
        return (
            f"Compaction removed **{self.saved_tokens:,}** tokens from later requests: they "
            f"sent {self.sent_tokens:,} prompt tokens instead of "
            f"{self.sent_tokens + self.saved_tokens:,}. About "
            f"**{format_dollars(self.saved_dollars)}** saved, against {spent}."
        )

    @property
    def summarization_requests(self) -> int:
        """How many summarization requests reported usage."""
        return sum(line.requests for line in self.lines if line.kind == "summarization")

    def table_markdown(self) -> str:
        """Per kind and model: requests, tokens in / cached / out, dollars, as a table."""
        rows = [
            f"| {line.label} | `{line.model}` | {line.requests} | {line.prompt:,} | "
            f"{line.cached:,} | {line.cache_write:,} | {line.output:,} | "
            f"{format_dollars(line.dollars, precise=True)} |"
            for line in self.lines
        ]
        return (
            "| kind | model | requests | in | cache read | cache write | out | cost |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
        )

    def blocks_markdown(self) -> str:
        """The table's figures as one block per kind and model, for a narrow screen."""
        return "\n".join(
            f"- **{line.label}** `{line.model}`: "
            f"**{format_dollars(line.dollars, precise=True)}** · "
            f"{line.requests:,} request{'s' if line.requests != 1 else ''} · "
            f"{line.prompt:,} in ({line.cached:,} cached{_written(line.cache_write)}) · "
            f"{line.output:,} out"
            for line in self.lines
        )

    def details_markdown(self, *, narrow: bool = False) -> str:
        """The `/cost` report: per model, tokens in/cached/out and dollars (a table, or one
        block per model when `narrow`); the compaction saving and how it is estimated."""
        if not self.lines:
            figures = "No request has reported usage yet."
        else:
            figures = self.blocks_markdown() if narrow else self.table_markdown()
        children = f", subagents {self._spent('subagent')}" if self.has_subagents else ""
        unpriced = any(line.dollars is None for line in self.lines)
        unknown = "; unknown: a model the price table does not list" if unpriced else ""
        estimated = self.estimated_requests()
        estimate = (
            f"\n\n{ESTIMATE_MARK} **Estimated**: {estimated:,} request"
            f"{'s' if estimated != 1 else ''} reported no usage; "
            f"{'they are' if estimated != 1 else 'it is'} priced from Forge's own token counts."
            if estimated
            else ""
        )
        report = (
            f"**Session cost: {self._spent()}** (agent {self._spent('agent')}, summarization "
            f"{self._spent('summarization')}{children}; USD, from the usage the server "
            f"reported{unknown}){estimate}\n\n{figures}"
        )
        if not self.saved_tokens and not self.removed_tokens:
            return report  # nothing was compacted: no saving to estimate
        return f"{report}\n\n{self.saving_sentence()}\n\n_{SAVING_METHOD}_"

    def _spent(self, kind: Kind | None = None) -> str:
        """`shown(kind)`, or "no requests yet" when no request of `kind` reported usage (a
        model without a price would otherwise read "$0.00")."""
        if not any(kind is None or line.kind == kind for line in self.lines):
            return "no requests yet"
        return self.shown(kind, precise=True)


def _written(cache_write: int) -> str:
    return f", {cache_write:,} cache write" if cache_write else ""


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def format_dollars(value: float | None, *, precise: bool = False) -> str:
    """ "$1.23", "$0.0042" below a cent (or always four decimals when `precise`, as /cost
    shows every provider's figures), "<$0.0001" for less, "unknown" for None."""
    if value is None:
        return "unknown"
    if 0 < value < 0.00005:  # a child's 200 tokens: spent, but "$0.0000" would say nothing was
        return "<$0.0001"
    if precise or (value and value < 0.01):
        return f"${value:.4f}"
    return f"${value:.2f}"
