"""`forge run`'s binding exit codes (ADR 0015): real CLI subprocesses against the loopback
server. 0 done, 1 failed, 2 usage (before any request), 3 turn limit, 4 budget, 5 timeout,
128+N signal (tests/agent/test_exit_signals.py) — each with its `result` record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.turn.test_loop_errors import OVERFLOW
from tests.headless.test_headless import forge_run, stream_json
from tests.support.openai_server import (
    Call,
    Fault,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)

MILLION = 1_000_000
"""gpt-4o-mini (the default model) costs $0.15 per million uncached prompt tokens."""


def result_of(run: Any) -> dict[str, Any]:
    return stream_json(run)[-1]


def session_files(home: Path) -> list[Path]:
    return list((home / "data" / "forge" / "sessions").glob("*.jsonl"))


def test_turn_limit_exits_3_with_error_max_turns(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls(
        [Call("read_file", {"path": "a.txt"})], text="Reading again."
    )
    run = forge_run(
        llm_server, workspace, "--max-turns", "3", "--output-format", "forge-jsonl", "x"
    )

    assert run.returncode == 3, run.stderr
    assert len(llm_server.requests) == 3  # never a fourth: the limit stops, not reports
    result = result_of(run)
    assert result["subtype"] == "error_max_turns" and result["is_error"] is True
    assert result["num_turns"] == 3 and result["exit_code"] == 3
    assert result["result"] == "Reading again."  # the last thing the model said


def test_budget_stops_after_the_request_that_crossed_it_exit_4(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls(
        [Call("read_file", {"path": "a.txt"})], prompt_tokens=MILLION, completion_tokens=10
    )
    run = forge_run(
        llm_server, workspace, "--max-budget-usd", "0.25", "--output-format", "forge-jsonl", "x"
    )

    assert run.returncode == 4, run.stderr
    # $0.15 per request: the second crosses $0.25 and finishes; no third is sent.
    assert len(llm_server.requests) == 2
    records = stream_json(run)
    assert records[-2]["type"] == "turn_finished" and records[-2]["reason"] == "max_budget"
    result = records[-1]
    assert result["subtype"] == "error_max_budget" and result["is_error"] is True
    assert result["total_cost_usd"] >= 0.25
    assert result["usage"]["input_tokens"] == 2 * MILLION
    # The session is saved, ending where the run stopped.
    (session,) = session_files(isolated_environment)
    assert session.stem == result["session_id"]
    assert "a.txt" in session.read_text()


def test_budget_counts_summarization_requests(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "big.txt").write_text("line of text\n" * 200)
    replies: list[Reply] = [
        ToolCalls([Call("read_file", {"path": "big.txt"})], prompt_tokens=1000),
        ToolCalls([Call("read_file", {"path": "big.txt", "start_line": 2})], prompt_tokens=1000),
        OVERFLOW,
        ToolCalls([Call("read_file", {"path": "big.txt", "start_line": 3})], prompt_tokens=1000),
        ToolCalls([Call("task_completion", {"result": "never reached"})]),
    ]

    def respond(request: RecordedRequest) -> Reply:
        if not request.tools:  # a summarization request: $0.30 each
            return Text("Summary: read big.txt.", prompt_tokens=2 * MILLION)
        return replies.pop(0)

    llm_server.responder = respond
    run = forge_run(
        llm_server, workspace, "--max-budget-usd", "0.1", "--output-format", "forge-jsonl", "x"
    )

    assert run.returncode == 4, run.stderr
    agent_requests = [r for r in llm_server.requests if r.tools]
    assert len(agent_requests) == 4  # the overflowed request's retry finished; nothing after
    result = result_of(run)
    assert result["subtype"] == "error_max_budget"
    assert result["usage"]["input_tokens"] >= 2 * MILLION  # the summaries' tokens count
    assert result["total_cost_usd"] >= 0.3


def test_budget_with_an_unpriced_model_is_a_usage_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    run = forge_run(llm_server, workspace, "--model", "my-local", "--max-budget-usd", "1", "x")

    assert run.returncode == 2
    assert "my-local" in run.stderr and "price" in run.stderr
    assert not llm_server.requests


def test_bad_budgets_and_output_files_are_usage_errors_before_any_request(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    for value in ("0", "-1", "abc", "nan", "inf"):
        run = forge_run(llm_server, workspace, "--max-budget-usd", value, "x")
        assert run.returncode == 2, value
        assert "--max-budget-usd" in run.stderr
    (workspace / "a-dir").mkdir()
    for target in ("a-dir", "missing-dir/out.txt"):
        run = forge_run(llm_server, workspace, "--output-last-message", target, "x")
        assert run.returncode == 2, target
        assert "--output-last-message" in run.stderr
    unknown = forge_run(llm_server, workspace, "--output-format", "yaml", "x")
    assert unknown.returncode == 2
    clash = forge_run(llm_server, workspace, "--output", "jsonl", "--output-format", "json", "x")
    assert clash.returncode == 2 and "contradicts" in clash.stderr
    ephemeral = forge_run(llm_server, workspace, "--ephemeral", "--continue", "x")
    assert ephemeral.returncode == 2 and "--ephemeral" in ephemeral.stderr
    assert not llm_server.requests


def test_timeout_exits_5_with_error_timeout_and_the_partial_text(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Text("partial answer " * 100, chunk_size=8, chunk_delay=0.05))
    run = forge_run(
        llm_server, workspace, "--timeout", "1.5", "--output-format", "forge-jsonl", "slow"
    )

    assert run.returncode == 5, run.stderr
    records = stream_json(run)
    assert records[-2] == {**records[-2], "type": "turn_finished", "reason": "timeout"}
    result = records[-1]
    assert result["subtype"] == "error_timeout" and result["is_error"] is True
    assert result["result"].startswith("partial answer")
    assert len(session_files(isolated_environment)) == 1  # saved


def test_a_server_error_exits_1_with_error_during_execution(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Fault(500, {"error": {"message": "boom"}}))
    run = forge_run(llm_server, workspace, "--output-format", "json", "x")

    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["subtype"] == "error_during_execution" and result["stop_reason"] == "error"
