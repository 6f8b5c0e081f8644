"""The `result` message in Claude Code's shape (`--output-format json` and stream-json's last
line), made from Forge's own `result` record (forge-jsonl's, docs/adr/0015).

Claude Code's names and conventions: `subtype` from its enum (`error_max_budget_usd`; Forge's
`error_timeout` and `error_signal` kept as extra values), `usage` with `input_tokens` the
uncached input summed over the run's requests and the cache read and written apart (integer
counts only), `modelUsage` per model, `permission_denials[]` with `tool_use_id`, `uuid`,
`duration_api_ms`, and `errors` on an error ending. The one deviation: `total_cost_usd` (and a
model's `costUSD`) is null for a model without a price — Forge never guesses one. Forge's
extra facts stay as extra fields (`exit_code`, `cost_estimated`, `subagents`, `notices`,
`sandbox`), which a Claude Code consumer ignores.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from forge.agent.events import AssistantMessageDone, ErrorEvent, SubagentEvent
from forge.context.events import ContextUsage
from forge.llm.messages import ToolCall
from forge.session.events import SessionEvent

CLAUDE_SUBTYPES = {"error_max_budget": "error_max_budget_usd"}
"""Forge's `subtype` values that Claude Code spells otherwise (the rest are the same, or
Forge's own: `error_timeout`, `error_signal`)."""

PERMISSION_MODES = {
    "ask": "default",
    "accept-edits": "acceptEdits",
    "auto": "bypassPermissions",
    "plan": "plan",
    "read-only": "plan",
}
"""Forge's permission modes as Claude Code's `permissionMode` values (read-only, which
neither edits nor runs commands, is closest to Claude Code's plan mode); Forge's own name
goes in `forge_mode`."""


def new_uuid() -> str:
    """A message's `uuid`."""
    return str(uuid.uuid4())


def tool_input(call: ToolCall) -> dict[str, object]:
    """The call's arguments as an object (a `tool_use` block's `input`); unparseable ones
    under `raw`, as sent."""
    try:
        return call.parsed_arguments()
    except ValueError:
        return {"raw": call.arguments}


def claude_usage(prompt: int, cached: int, cache_write: int, output: int) -> dict[str, int]:
    """Token counts in Claude's convention: `input_tokens` excludes what was read from or
    written to the cache (Forge's prompt count includes both)."""
    return {
        "input_tokens": max(0, int(prompt) - int(cached) - int(cache_write)),
        "cache_creation_input_tokens": int(cache_write),
        "cache_read_input_tokens": int(cached),
        "output_tokens": int(output),
    }


class RunFacts:
    """What the Claude Code shapes need beyond Forge's `result` record, watched from the
    run's events: the error messages and the time spent waiting on requests."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.api_seconds = 0.0
        self._request_started: float | None = None

    def observe(self, event: SessionEvent) -> None:
        """Take note of one event (a child's count in its own requests' time too)."""
        inner = event
        while isinstance(inner, SubagentEvent):
            inner = inner.event
        match inner:
            case ContextUsage():  # said just before each request
                self._request_started = time.monotonic()
            case AssistantMessageDone():
                self._request_done()
            case ErrorEvent(message=message):
                self._request_done()
                if not isinstance(event, SubagentEvent):
                    self.errors.append(message)
            case _:
                pass

    def _request_done(self) -> None:
        if self._request_started is not None:
            self.api_seconds += time.monotonic() - self._request_started
            self._request_started = None


def claude_result(
    record: Mapping[str, Any],
    models: Mapping[str, Mapping[str, Any]],
    facts: RunFacts,
) -> dict[str, Any]:
    """Claude Code's `result` message from Forge's `result` record; `models` is the run's
    tokens and dollars per model (`RunRecorder.models`)."""
    usage = record.get("usage") or {}
    subtype = str(record.get("subtype", ""))
    result: dict[str, Any] = {
        "type": "result",
        "subtype": CLAUDE_SUBTYPES.get(subtype, subtype),
        "uuid": new_uuid(),
        "session_id": record.get("session_id", ""),
        "duration_ms": record.get("duration_ms", 0),
        "duration_api_ms": round(facts.api_seconds * 1000),
        "is_error": bool(record.get("is_error")),
        "num_turns": record.get("num_turns", 0),
        "result": record.get("result", ""),
        "stop_reason": record.get("stop_reason"),
        "total_cost_usd": record.get("total_cost_usd"),
        "usage": claude_usage(
            usage.get("input_tokens", 0),
            usage.get("cached_input_tokens", 0),
            usage.get("cache_write_tokens", 0),
            usage.get("output_tokens", 0),
        ),
        "modelUsage": {model: _model_usage(figures) for model, figures in models.items()},
        "permission_denials": [_denial(entry) for entry in record.get("permission_denials", ())],
    }
    if result["is_error"]:
        result["errors"] = list(facts.errors) or [f"stopped: {record.get('stop_reason')}"]
    for extra in ("exit_code", "cost_estimated", "subagents", "notices", "sandbox"):
        if extra in record:
            result[extra] = record[extra]
    return result


def _model_usage(figures: Mapping[str, Any]) -> dict[str, Any]:
    usage = claude_usage(
        figures["prompt"], figures["cached"], figures["cache_write"], figures["output"]
    )
    return {
        "inputTokens": usage["input_tokens"],
        "outputTokens": usage["output_tokens"],
        "cacheReadInputTokens": usage["cache_read_input_tokens"],
        "cacheCreationInputTokens": usage["cache_creation_input_tokens"],
        "webSearchRequests": 0,
        "costUSD": figures["dollars"],
    }


def _denial(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A denial with Claude Code's keys first and Forge's (`reason`, `arguments`) after."""
    return {
        "tool_name": entry.get("tool_name"),
        "tool_use_id": entry.get("call_id"),
        "tool_input": entry.get("tool_input", {}),
        "reason": entry.get("reason", ""),
        "arguments": entry.get("arguments", ""),
    }
