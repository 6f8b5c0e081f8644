"""`forge run --output-format text|json|stream-json`, `--output-last-message`, `forge run -`
and headless refusals (ADR 0015): real CLI subprocesses against the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import forge
from forge.headless.run import HEADLESS_REJECTION
from tests.headless.test_headless import API_KEY, REPO_ROOT, forge_run, stream_json
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

CLAUDE_RESULT_FIELDS = {
    "type",
    "subtype",
    "uuid",
    "session_id",
    "duration_ms",
    "duration_api_ms",
    "is_error",
    "num_turns",
    "result",
    "stop_reason",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "exit_code",
    "cost_estimated",
    "subagents",
}
"""Claude Code's `result` fields and Forge's extras (`exit_code`, `cost_estimated`,
`subagents`)."""
RESULT_FIELDS = {
    "type",
    "subtype",
    "is_error",
    "exit_code",
    "stop_reason",
    "session_id",
    "num_turns",
    "duration_ms",
    "usage",
    "total_cost_usd",
    "cost_estimated",
    "permission_denials",
    "subagents",
    "result",
}
USAGE_FIELDS = {"input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens"}


def script(server: OpenAIServer) -> None:
    server.enqueue(
        ToolCalls(
            [Call("list_files", {"path": "."})],
            text="Let me look.",
            prompt_tokens=1000,
            cached_tokens=400,
            completion_tokens=20,
        ),
        Text("The answer is 42.", prompt_tokens=1200, cached_tokens=1000, completion_tokens=8),
    )


def test_stream_json_has_init_first_and_result_last(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    script(llm_server)
    run = forge_run(llm_server, workspace, "--output-format", "forge-jsonl", "--mode", "ask", "q")

    assert run.returncode == 0, run.stderr
    records = stream_json(run)
    init = records[0]
    assert init["forge_version"] == forge.__version__ and init["model"] == "gpt-4o-mini"
    assert init["mode"] == "ask" and {"read_file", "write_file"} <= set(init["tools"])
    assert init["session_id"] == records[1]["session_id"]  # run_started still follows
    assert records[1]["type"] == "run_started"
    result = records[-1]
    assert set(result) == RESULT_FIELDS and set(result["usage"]) == USAGE_FIELDS
    assert result["subtype"] == "success" and result["is_error"] is False
    assert result["exit_code"] == 0 and result["stop_reason"] == "answered"
    assert result["num_turns"] == 2 and result["result"] == "The answer is 42."
    assert result["usage"] == {
        "input_tokens": 2200,
        "cached_input_tokens": 1400,
        "cache_write_tokens": 0,
        "output_tokens": 28,
    }
    # gpt-4o-mini: $0.15/M uncached, $0.075/M cached, $0.60/M output.
    expected = (800 * 0.15 + 1400 * 0.075 + 28 * 0.60) / 1_000_000
    assert abs(result["total_cost_usd"] - expected) < 1e-6
    assert isinstance(result["duration_ms"], int) and result["duration_ms"] >= 0
    assert result["permission_denials"] == []


def test_output_jsonl_keeps_meaning_forges_own_records(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("hi"))
    run = forge_run(llm_server, workspace, "--output", "jsonl", "q")
    assert run.returncode == 0, run.stderr
    records = stream_json(run)  # Forge's `init` first
    assert records[-1]["result"] == "hi" and "cached_input_tokens" in records[-1]["usage"]
    llm_server.enqueue(Text("hi"))
    same = forge_run(llm_server, workspace, "--output-format", "forge-jsonl", "q")
    assert [r["type"] for r in stream_json(same)] == [r["type"] for r in records]
    clash = forge_run(
        llm_server, workspace, "--output", "jsonl", "--output-format", "stream-json", "q"
    )
    assert clash.returncode == 2 and "contradicts" in clash.stderr
    partial = forge_run(llm_server, workspace, "--include-partial-messages", "q")
    assert partial.returncode == 2 and "needs --output-format stream-json" in partial.stderr


def test_stream_json_starts_with_claude_codes_system_init(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    script(llm_server)
    run = forge_run(llm_server, workspace, "--output-format", "stream-json", "--mode", "ask", "q")

    assert run.returncode == 0, run.stderr
    messages = [json.loads(line) for line in run.stdout.splitlines()]
    init = messages[0]
    assert (init["type"], init["subtype"]) == ("system", "init")
    assert init["permissionMode"] == "default" and init["forge_mode"] == "ask"
    assert init["cwd"] == str(workspace) and "list_files" in init["tools"]
    assert init["session_id"] == messages[-1]["session_id"]
    assert not any(m["type"] == "stream_event" for m in messages)  # no partial messages asked
    assert [m["type"] for m in messages].count("result") == 1 and messages[-1]["type"] == "result"


def test_json_prints_one_object_at_the_end(llm_server: OpenAIServer, workspace: Path) -> None:
    script(llm_server)
    run = forge_run(llm_server, workspace, "--output-format", "json", "q")

    assert run.returncode == 0, run.stderr
    assert len(run.stdout.splitlines()) == 1
    result = json.loads(run.stdout)
    # Claude Code's `result` (its one record is also its first: it carries init's sandbox,
    # docs/adr/0053); usage in Claude's convention: input_tokens without the cached ones.
    assert set(result) == CLAUDE_RESULT_FIELDS | {"sandbox"} and result["type"] == "result"
    assert set(result["sandbox"]) == {"enabled", "mechanism", "network"}
    assert result["result"] == "The answer is 42."
    assert result["usage"] == {
        "input_tokens": 800,
        "cache_read_input_tokens": 1400,
        "cache_creation_input_tokens": 0,
        "output_tokens": 28,
    }
    assert set(result["modelUsage"]) == {"gpt-4o-mini"}


def test_text_prints_only_the_final_answer_on_stdout(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    script(llm_server)
    run = forge_run(llm_server, workspace, "q")

    assert run.returncode == 0, run.stderr
    assert run.stdout == "The answer is 42.\n"
    assert "Let me look." in run.stderr and "→ list_files" in run.stderr


def test_text_tells_the_user_how_to_allow_a_call_nobody_could_approve(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x"})]), Text("No.")
    )
    run = forge_run(llm_server, workspace, "write")

    assert run.returncode == 0, run.stderr
    assert run.stdout == "No.\n"
    (line,) = [line for line in run.stderr.splitlines() if line.startswith("✗ not allowed")]
    assert HEADLESS_REJECTION in line and "--yes" in line


def test_task_from_stdin_and_last_message_file(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(Text(f"Done; the key was {API_KEY}."))
    environment = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": API_KEY,
    }
    run = subprocess.run(
        [sys.executable, "-m", "forge", "run", "--output-last-message", "last.md", "-"],
        cwd=workspace,
        env=environment,
        input="the task\nfrom stdin\n",
        capture_output=True,
        text=True,
        timeout=90,
    )

    assert run.returncode == 0, run.stderr
    assert llm_server.requests[0].messages[1]["content"] == "the task\nfrom stdin"
    written = (workspace / "last.md").read_text()
    assert written == "Done; the key was ***." == run.stdout.strip()
    empty = subprocess.run(
        [sys.executable, "-m", "forge", "run", "-"],
        cwd=workspace,
        env=environment,
        input="  \n",
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert empty.returncode == 2 and "no task" in empty.stderr


def calls_pair_up(records: list[dict[str, Any]]) -> None:
    started = [r["call_id"] for r in records if r["type"] == "tool_call_started"]
    finished = [r["call_id"] for r in records if r["type"] == "tool_call_finished"]
    assert started == finished and len(set(started)) == len(started)
    for call_id in started:  # started before finished
        kinds = [r["type"] for r in records if r.get("call_id") == call_id]
        assert kinds.index("tool_call_started") < kinds.index("tool_call_finished")


def test_headless_refusals_tell_the_truth_and_are_listed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x"})]),
        ToolCalls([Call("execute_command", {"command": "rm -rf build"})]),
        Text("I could not write it."),
    )
    run = forge_run(llm_server, workspace, "--output-format", "forge-jsonl", "write out.txt")

    assert run.returncode == 0, run.stderr
    assert not (workspace / "out.txt").exists()
    tool_results = [m for m in llm_server.requests[2].messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == [HEADLESS_REJECTION] * 2
    assert HEADLESS_REJECTION == "not allowed in this run (no approval possible in headless mode)"
    records = stream_json(run)
    calls_pair_up(records)
    denials = records[-1]["permission_denials"]
    assert [(d["tool_name"], d["reason"]) for d in denials] == [
        ("write_file", HEADLESS_REJECTION),
        ("execute_command", HEADLESS_REJECTION),
    ]
    assert "out.txt" in denials[0]["arguments"] and "rm -rf build" in denials[1]["arguments"]
    # The arguments as sent, under Claude Code's key, for scripts that act on them.
    assert denials[0]["tool_input"] == {"path": "out.txt", "content": "x"}
    assert denials[1]["tool_input"] == {"command": "rm -rf build"}


def test_read_only_refusals_pair_up_and_are_listed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x"})]),
        Text("Read-only, so no."),
    )
    run = forge_run(
        llm_server, workspace, "--mode", "read-only", "--output-format", "forge-jsonl", "w"
    )

    assert run.returncode == 0, run.stderr
    records = stream_json(run)
    calls_pair_up(records)
    assert [d["tool_name"] for d in records[-1]["permission_denials"]] == ["write_file"]
