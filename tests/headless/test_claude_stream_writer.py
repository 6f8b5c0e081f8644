"""The stream-json writer's edges, on the writer itself: a run stopped before its tools were
listed still starts with `system`/`init`; a child agent's messages name their `task` call in
`parent_tool_use_id`; an unpriced model's cost stays null (the README's one deviation)."""

from __future__ import annotations

import io
import json
from typing import Any

from forge.agent.events import AssistantMessageDone, SubagentEvent, ToolCallFinished, UsageEvent
from forge.headless.claude_result import RunFacts, claude_result
from forge.headless.claude_stream import ClaudeStreamWriter
from forge.llm.messages import Message, ToolCall
from forge.llm.stream import Usage

FORGE_RESULT: dict[str, Any] = {
    "type": "result",
    "subtype": "error_signal",
    "is_error": True,
    "exit_code": 143,
    "stop_reason": "signal",
    "session_id": "s1",
    "num_turns": 0,
    "duration_ms": 5,
    "usage": {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 0,
    },
    "total_cost_usd": None,
    "cost_estimated": False,
    "permission_denials": [],
    "subagents": [],
    "result": "",
}


def lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_run_stopped_before_init_still_starts_with_system_init() -> None:
    out = io.StringIO()
    writer = ClaudeStreamWriter(out, io.StringIO())
    writer.early_init = {"type": "init", "session_id": "s1", "model": "m", "mode": "ask"}
    writer.interrupted("SIGTERM")
    writer.finish(FORGE_RESULT)

    messages = lines(out)
    assert (messages[0]["type"], messages[0]["subtype"]) == ("system", "init")
    assert messages[0]["permissionMode"] == "default"
    assert messages[-1]["type"] == "result" and messages[-1]["subtype"] == "error_signal"
    assert messages[-1]["errors"] == ["interrupted (SIGTERM)"]


def test_a_childs_messages_name_their_task_call() -> None:
    out = io.StringIO()
    writer = ClaudeStreamWriter(out, io.StringIO())
    writer.init({"type": "init", "session_id": "s1", "model": "m", "mode": "auto"})
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a"}')
    message = Message(role="assistant", content="", tool_calls=(call,))
    usage = Usage(prompt_tokens=100, completion_tokens=5, total_tokens=105, cached_tokens=40)
    for inner in (
        AssistantMessageDone(message),
        UsageEvent(usage, 100, 5),
        ToolCallFinished(call, "a's text"),
    ):
        writer.event(SubagentEvent("explore", "task_1", inner))
    writer.finish({**FORGE_RESULT, "subtype": "success", "is_error": False})

    assistant, user = (m for m in lines(out) if m["type"] in ("assistant", "user"))
    assert assistant["parent_tool_use_id"] == user["parent_tool_use_id"] == "task_1"
    assert assistant["message"]["usage"]["input_tokens"] == 60  # uncached only
    assert assistant["message"]["usage"]["cache_read_input_tokens"] == 40
    assert user["message"]["content"][0]["tool_use_id"] == "c1"


def test_an_unpriced_model_has_a_null_cost() -> None:
    models = {"local": {"prompt": 10, "cached": 0, "cache_write": 0, "output": 2, "dollars": None}}
    result = claude_result(FORGE_RESULT, models, RunFacts())
    assert result["total_cost_usd"] is None
    assert result["modelUsage"]["local"]["costUSD"] is None
    assert result["modelUsage"]["local"]["inputTokens"] == 10


def test_init_lists_the_mcp_servers_in_claude_codes_statuses() -> None:
    out = io.StringIO()
    writer = ClaudeStreamWriter(out, io.StringIO())
    writer.mcp_statuses = lambda: {"docs": "ready (2 tools)", "db": "failed: exited 1"}
    writer.init({"type": "init", "session_id": "s1", "model": "m", "mode": "auto"})
    writer.finish({**FORGE_RESULT, "subtype": "success", "is_error": False})

    servers = lines(out)[0]["mcp_servers"]
    assert servers == [
        {"name": "docs", "status": "connected", "forge_status": "ready (2 tools)"},
        {"name": "db", "status": "failed", "forge_status": "failed: exited 1"},
    ]
