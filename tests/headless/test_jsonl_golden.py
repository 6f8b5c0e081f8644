"""The jsonl records of a whole `forge run` turn, compared with a stored golden file.

ADR 0015 promises that the records' names and fields do not change. This test runs one full
turn against the loopback server — streamed text and reasoning, a tool call that works and one
that fails, a context overflow that makes the context manager summarize, usage, the ending and
the `result` — and compares every record, in order and with its fields in order, with
`golden/forge_run_turn.jsonl`. Only what differs from run to run is normalised: ids, the
session, durations, paths, the version and the context's size (the system prompt holds the
path and the date).

To regenerate after an intended change of the format: `UPDATE_GOLDEN=1 pytest
tests/headless/test_jsonl_golden.py`, and say why in ADR 0015.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from tests.headless.test_headless import forge_run, stream_json
from tests.support.openai_server import (
    Call,
    ContextOverflow,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)

GOLDEN = Path(__file__).resolve().parent / "golden" / "forge_run_turn.jsonl"

VOLATILE = {
    "session_id": "<session>",
    "run_id": "<run>",
    "duration_ms": "<ms>",
    "duration_s": "<s>",
    "forge_version": "<version>",
    # The system prompt holds the workspace path and today's date, so the context's size
    # changes with them (the server's reported usage is scripted and stays).
    "current_tokens": "<tokens>",
    "tokens_before": "<tokens>",
    "tokens_after": "<tokens>",
    # A marker names the recall keys of what it dropped (random ids, tokenized to 2-4
    # tokens each), so what a compaction saved varies by a few tokens (docs/adr/0050).
    "compaction_saved_tokens": "<tokens>",
    "compaction_saved": "<dollars>",
}
"""Fields whose values change from run to run, and what they become."""


def script() -> list[Reply]:
    """The agent's replies, in order (summarization requests are answered apart)."""
    return [
        ToolCalls(
            [Call("read_file", {"path": "in.txt"}, id="call_read")],
            text="Let me look.",
            prompt_tokens=900,
            completion_tokens=12,
        ),
        ToolCalls(
            [Call("read_file", {"path": "missing.txt"}, id="call_missing")],
            prompt_tokens=950,
            completion_tokens=10,
        ),
        ContextOverflow(limit=8192, sent=9000),
        Text(
            "The file says hello.",
            reasoning="It read in.txt.",
            prompt_tokens=400,
            cached_tokens=100,
            completion_tokens=8,
        ),
    ]


def normalise(record: Any, workspace: str, home: str) -> Any:
    """`record` with the volatile values replaced (recursively), keys kept in their order."""
    if isinstance(record, dict):
        out: dict[str, Any] = {}
        for key, value in record.items():
            if key in VOLATILE and value is not None:
                out[key] = VOLATILE[key]
            elif key == "id" and isinstance(value, str):
                out[key] = "<id>"
            else:
                out[key] = normalise(value, workspace, home)
        return out
    if isinstance(record, list):
        return [normalise(item, workspace, home) for item in record]
    if isinstance(record, str):
        text = record.replace(workspace, "<workspace>").replace(home, "<home>")
        return re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "<session>", text)
    return record


def run_turn(server: OpenAIServer, workspace: Path) -> list[dict[str, Any]]:
    (workspace / "in.txt").write_text("hello\n")
    replies = script()

    def respond(request: RecordedRequest) -> Reply:
        if not request.tools:  # a summarization request
            return Text("Summary: read in.txt; missing.txt is absent.", prompt_tokens=300)
        return replies.pop(0)

    server.responder = respond
    result = forge_run(server, workspace, "--output", "jsonl", "--yes", "read in.txt")
    assert result.returncode == 0, result.stderr
    assert not replies, "every scripted reply was asked for"
    home = os.environ.get("XDG_DATA_HOME", str(workspace))
    return [normalise(record, str(workspace), home) for record in stream_json(result)]


def test_a_full_turn_writes_the_golden_records(llm_server: OpenAIServer, workspace: Path) -> None:
    records = run_turn(llm_server, workspace)
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    types = {record["type"] for record in records}
    # The turn covers what the golden file is for (a change of the script must keep it so).
    assert {
        "message_delta",
        "reasoning_delta",
        "assistant_message",
        "tool_call_started",
        "tool_call_finished",
        "summarization_started",
        "summarization_completed",
        "usage",
        "turn_finished",
        "result",
    } <= types
    assert any(r["type"] == "tool_call_finished" and r["is_error"] for r in records)
    golden = GOLDEN.read_text(encoding="utf-8").splitlines()
    assert lines == golden
