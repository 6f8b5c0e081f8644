"""What `forge run` reports at its end: the `result` record (stream-json's last line, json's
only object) and the spending `--max-budget-usd` is checked against.

`RunRecorder` watches the run's events and the session's cost ledger from the moment the run
starts (a resumed session's earlier cost is not this run's): the main agent's requests, the
usage of every request (summarization included), the dollars, the calls refused for lack of
approval, and the final text. Fields are documented in docs/adr/0015-headless-output.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forge import __version__
from forge.agent.costs import CostLedger, CostReport, TokenTotals
from forge.agent.events import (
    AssistantMessageDone,
    MessageDelta,
    ToolCallFinished,
    TurnFinished,
    UserMessageShortened,
)
from forge.config.prices import PriceTable
from forge.headless.exit_status import MAX_BUDGET_REASON, Ending
from forge.llm.messages import ToolCall
from forge.session.events import SessionEvent

ARGUMENT_SUMMARY_LIMIT = 200
"""Characters of a refused call's description kept in `permission_denials`."""


@dataclass(frozen=True)
class PermissionDenial:
    """A tool call that did not run because no one could approve it (or the mode forbids it)."""

    tool_name: str
    call_id: str
    arguments: str
    """A one-line summary of the call's arguments (the command, the file)."""
    reason: str
    tool_input: Mapping[str, object] = field(default_factory=dict)
    """The call's arguments as the model sent them (Claude Code's key for them)."""

    def to_dict(self) -> dict[str, object]:
        """The `permission_denials` entry."""
        return {
            "tool_name": self.tool_name,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "tool_input": dict(self.tool_input),
            "reason": self.reason,
        }


def _tool_input(call: ToolCall) -> dict[str, object]:
    """The call's arguments as an object; unparseable ones under `raw` (as sent)."""
    try:
        return call.parsed_arguments()
    except ValueError:
        return {"raw": call.arguments}


def _copy(ledger: CostLedger) -> CostLedger:
    return CostLedger.from_record(ledger.to_record())


def _sums(ledger: CostLedger) -> dict[str, int]:
    totals: list[TokenTotals] = [
        *ledger.agent.values(),
        *ledger.summarization.values(),
        *(totals for by_model in ledger.subagents.values() for totals in by_model.values()),
    ]
    return {
        "input_tokens": sum(t.prompt for t in totals),
        "cached_input_tokens": sum(t.cached for t in totals),
        # Counted once providers report cache writes (Anthropic); 0 until then.
        "cache_write_tokens": sum(int(getattr(t, "cache_write", 0) or 0) for t in totals),
        "output_tokens": sum(t.output for t in totals),
    }


_MODEL_COUNTS = ("requests", "prompt", "cached", "cache_write", "output")


def _by_model(report: CostReport) -> dict[str, dict[str, Any]]:
    """The report's lines summed per model (agent, summarization and children together)."""
    models: dict[str, dict[str, Any]] = {}
    for line in report.lines:
        entry = models.setdefault(line.model, {key: 0 for key in _MODEL_COUNTS} | {"dollars": 0.0})
        for key in _MODEL_COUNTS:
            entry[key] += getattr(line, key)
        entry["dollars"] = (
            None
            if entry["dollars"] is None or line.dollars is None
            else entry["dollars"] + line.dollars
        )
    return models


def make_init_record(
    session_id: str,
    model: str,
    tools: list[str],
    mode: str,
    workspace: str,
    sandbox: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The `init` record: the stream's first (session, model, tools, mode, Forge's version,
    and the command sandbox: `{"enabled", "mechanism", "network"}`, docs/adr/0053)."""
    record: dict[str, Any] = {
        "type": "init",
        "session_id": session_id,
        "model": model,
        "tools": tools,
        "mode": mode,
        "forge_version": __version__,
        "workspace": workspace,
    }
    if sandbox is not None:
        record["sandbox"] = dict(sandbox)
    return record


class RunRecorder:
    """The figures of one `forge run`, from its start (`ledger` is the session's, read live)."""

    def __init__(
        self,
        ledger: Callable[[], CostLedger],
        prices: PriceTable,
        *,
        agent_requests: Callable[[], int],
        describe: Callable[[Any], str],
    ) -> None:
        self._ledger = ledger
        self._prices = prices
        self._agent_requests = agent_requests
        self._describe = describe
        self._baseline = _copy(ledger())
        self._started = time.monotonic()
        self.denials: list[PermissionDenial] = []
        self.final_text = ""
        self._last_answer = ""
        self._partial: list[str] = []  # joined once when needed: a long answer stays linear
        self.notices: list[str] = []
        """Forge's notices a run's output must carry even as one `result` object (a task sent
        as its head and tail: issue 34)."""

    def observe(self, event: SessionEvent) -> None:
        """Take note of one event of the run."""
        if isinstance(event, MessageDelta):
            self._partial.append(event.text)
        elif isinstance(event, AssistantMessageDone):
            self._partial = []
            if event.message.content:
                self._last_answer = event.message.content
        elif isinstance(event, ToolCallFinished):
            meta = event.metadata
            if meta.get("denied") or meta.get("refused"):
                self.denials.append(
                    PermissionDenial(
                        event.call.name,
                        event.call.id,
                        self._describe(event.call)[:ARGUMENT_SUMMARY_LIMIT],
                        event.result,
                        _tool_input(event.call),
                    )
                )
        elif isinstance(event, TurnFinished):
            self.final_text = event.final_text
        elif isinstance(event, UserMessageShortened):
            self.notices.append(event.text)

    def last_text(self) -> str:
        """The final text: the turn's (a completion's result, an answer), else the last thing
        the model said, else what it was saying when the run was stopped."""
        return self.final_text or self._last_answer or "".join(self._partial)

    def spent(self) -> float | None:
        """Dollars this run has cost so far, every request counted; None if any is unpriced."""
        now = self._ledger().report(self._prices).dollars()
        before = self._baseline.report(self._prices).dollars()
        return None if now is None or before is None else max(0.0, now - before)

    def cost_estimated(self) -> bool:
        """Whether a request of this run reported no usage, so its cost is Forge's estimate."""
        now = self._ledger().report(self._prices).estimated_requests()
        return now > self._baseline.report(self._prices).estimated_requests()

    def usage(self) -> dict[str, int]:
        """Tokens of this run's requests (agent and summarization)."""
        now, before = _sums(self._ledger()), _sums(self._baseline)
        return {key: max(0, now[key] - before[key]) for key in now}

    def models(self) -> dict[str, dict[str, Any]]:
        """Per model, this run's tokens (`prompt`, `cached`, `cache_write`, `output`) and
        `dollars` (None without a price), every kind of request together."""
        now = _by_model(self._ledger().report(self._prices))
        before = _by_model(self._baseline.report(self._prices))
        models: dict[str, dict[str, Any]] = {}
        for model, figures in now.items():
            earlier = before.get(model, {})
            entry: dict[str, Any] = {
                key: max(0, figures[key] - earlier.get(key, 0)) for key in _MODEL_COUNTS
            }
            dollars, was = figures["dollars"], earlier.get("dollars", 0.0)
            entry["dollars"] = None if dollars is None or was is None else round(dollars - was, 6)
            if entry["requests"]:
                models[model] = entry
        return models

    def subagents(self) -> list[dict[str, Any]]:
        """Per child agent that ran in this run: its requests, tokens and dollars (the
        `result`'s `subagents`; docs/adr/0045)."""
        before = {
            entry["agent"]: entry for entry in self._baseline.report(self._prices).subagents_dict()
        }
        children = []
        for entry in self._ledger().report(self._prices).subagents_dict():
            earlier = before.get(entry["agent"], {})
            child: dict[str, Any] = {"agent": entry["agent"]}
            for key in ("requests", "input_tokens", "cached_tokens", "output_tokens"):
                child[key] = max(0, entry[key] - earlier.get(key, 0))
            dollars, was = entry["dollars"], earlier.get("dollars", 0.0)
            child["dollars"] = None if dollars is None or was is None else round(dollars - was, 6)
            if child["requests"]:
                children.append(child)
        return children

    def result(self, ending: Ending, session_id: str) -> dict[str, Any]:
        """The `result` record."""
        spent = self.spent()
        record: dict[str, Any] = {
            "type": "result",
            "subtype": ending.subtype,
            "is_error": ending.is_error,
            "exit_code": ending.exit_code,
            "stop_reason": ending.reason,
            "session_id": session_id,
            "num_turns": self._agent_requests(),
            "duration_ms": round((time.monotonic() - self._started) * 1000),
            "usage": self.usage(),
            "total_cost_usd": None if spent is None else round(spent, 6),
            "cost_estimated": self.cost_estimated(),
            "permission_denials": [denial.to_dict() for denial in self.denials],
            "subagents": self.subagents(),
            "result": self.last_text(),
        }
        if self.notices:
            record["notices"] = list(self.notices)
        return record


class BudgetGuard:
    """Stops the run once it has spent `limit` dollars (the agent asks before each request;
    the request in flight when the limit is crossed finishes)."""

    def __init__(self, limit: float, spent: Callable[[], float | None]) -> None:
        self.limit = limit
        self._spent = spent

    def __call__(self) -> str | None:
        """`max_budget` once the limit is reached (or the spending became unknowable)."""
        spent = self._spent()
        return MAX_BUDGET_REASON if spent is None or spent >= self.limit else None
