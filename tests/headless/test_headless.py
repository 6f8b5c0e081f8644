"""`forge run` as a real subprocess: real CLI, real loopback server, real temp workspace.
Checks exit codes (0 completed, 1 failed/stopped, 2 usage/config) and every jsonl line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from forge.agent.turn.answers import NO_USER_ANSWER
from forge.headless.run import HEADLESS_REJECTION
from tests.agent.turn.test_loop_errors import OVERFLOW
from tests.support.openai_server import (
    Call,
    Fault,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-headless-SECRET-0123456789"


def forge_run(
    server: OpenAIServer, workspace: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -m forge run ARGS` in `workspace` against the loopback server."""
    environment = dict(os.environ)  # the conftest's isolated XDG directories
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY=API_KEY,
        FORGE_LLM__MAX_RETRIES="0",
    )
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "forge", "run", *args],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=90,
    )


def stream_json(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """Every stdout line parsed as one JSON object with a type; `init` first, `result` last."""
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(isinstance(record, dict) and "type" in record for record in records)
    assert records[0]["type"] == "init", records[:1]
    assert records[-1]["type"] == "result", records[-1:]
    assert [r["type"] for r in records].count("result") == 1
    return records


def jsonl(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The records between `init` and `result` (checked present): the stream as it was before
    they were added (ADR 0015)."""
    return stream_json(result)[1:-1]


def types(records: list[dict[str, Any]]) -> list[str]:
    return [record["type"] for record in records]


def no_secret_anywhere(result: subprocess.CompletedProcess[str], home: Path) -> None:
    assert API_KEY not in result.stdout and API_KEY not in result.stderr
    for path in home.rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(errors="replace"), path


def test_completed_task_exits_0_with_valid_jsonl(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    (workspace / "in.txt").write_text("hello\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "in.txt"})], text="Looking."),
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "HELLO\n"})]),
        ToolCalls([Call("task_completion", {"result": "out.txt written"})]),
    )
    result = forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "upper-case in.txt")

    assert result.returncode == 0, result.stderr
    assert (workspace / "out.txt").read_text() == "HELLO\n"
    records = jsonl(result)
    assert records[0]["type"] == "run_started" and records[0]["model"] == "gpt-4o-mini"
    final = dict(records[-1])
    assert final.pop("cost")["currency"] == "USD"  # docs/adr/0029
    assert final == {
        "type": "turn_finished",
        "reason": "completed",
        "final_text": "out.txt written",
    }
    kinds = types(records)
    assert "approval_requested" not in kinds  # --yes approves everything
    assert {"message_delta", "assistant_message", "usage", "context_usage"} <= set(kinds)
    started = [r for r in records if r["type"] == "tool_call_started"]
    assert [r["name"] for r in started] == ["read_file", "write_file", "task_completion"]
    finished = [r for r in records if r["type"] == "tool_call_finished"]
    assert set(finished[0]) >= {"call_id", "name", "arguments", "result", "is_error", "exit_code"}
    assert "hello" in finished[0]["result"]
    usage = next(r for r in records if r["type"] == "usage")
    assert set(usage) >= {"prompt_tokens", "completion_tokens", "session_prompt_tokens"}
    # The session was recorded and names this workspace.
    sessions = list((isolated_environment / "data" / "forge" / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1
    assert records[0]["session_id"] == sessions[0].stem
    no_secret_anywhere(result, isolated_environment)


def test_without_yes_writes_are_rejected_with_a_reason_the_model_sees(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x"})]),
        ToolCalls([Call("ask_question", {"question": "May I?"})]),
        ToolCalls([Call("task_completion", {"result": "could not write"})]),
    )
    result = forge_run(llm_server, workspace, "--output", "jsonl", "write out.txt")

    assert result.returncode == 0, result.stderr
    assert not (workspace / "out.txt").exists()
    records = jsonl(result)
    decision = next(r for r in records if r["type"] == "approval_decision")
    assert decision["verdict"] == "reject" and decision["reason"] == HEADLESS_REJECTION
    sent = [m for m in llm_server.requests[1].messages if m["role"] == "tool"]
    assert sent[-1]["content"] == HEADLESS_REJECTION
    answered = [m for m in llm_server.requests[2].messages if m["role"] == "tool"]
    assert answered[-1]["content"] == NO_USER_ANSWER
    assert "question_asked" not in types(records)
    # Headless tells the model nobody can answer.
    assert "No user is watching" in llm_server.requests[0].messages[0]["content"]


def test_text_output_and_task_file(llm_server: OpenAIServer, workspace: Path) -> None:
    task_file = workspace / "task.md"
    task_file.write_text("Say hello\n")
    llm_server.enqueue(
        ToolCalls([Call("list_files", {"path": "."})], text="Let me look."),
        Text("Hello from the model."),
    )
    result = forge_run(llm_server, workspace, "--task-file", str(task_file))

    assert result.returncode == 0, result.stderr
    assert llm_server.requests[0].messages[1]["content"] == "Say hello"
    # Only the final answer on stdout; progress on stderr (ADR 0015).
    assert result.stdout == "Hello from the model.\n"
    lines = result.stderr.splitlines()
    assert "Let me look." in lines
    assert any(line.startswith("→ list_files") for line in lines)
    assert any(line.startswith("  ✓") for line in lines)
    assert "✔ answered" in lines and "Hello from the model." not in lines


def test_max_turns_exits_3(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls([Call("read_file", {"path": "a.txt"})])
    result = forge_run(llm_server, workspace, "--max-turns", "2", "--output", "jsonl", "loop")

    assert result.returncode == 3
    assert jsonl(result)[-1]["reason"] == "max_turns"
    assert len(llm_server.requests) == 2


def test_provider_error_exits_1_on_stderr_without_the_key(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Fault(401, {"error": {"message": f"bad key {API_KEY}"}}))
    result = forge_run(llm_server, workspace, "--output", "jsonl", "hi")

    assert result.returncode == 1
    records = jsonl(result)
    error = next(r for r in records if r["type"] == "error")
    assert error["kind"] == "authentication" and error["fatal"] is True
    assert records[-1]["reason"] == "error"
    assert "authentication" in result.stderr
    no_secret_anywhere(result, isolated_environment)


def test_timeout_exits_5(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(Text("too late", delay=30))
    result = forge_run(llm_server, workspace, "--timeout", "0.5", "--output", "jsonl", "slow")

    assert result.returncode == 5
    records = jsonl(result)
    assert records[-2]["kind"] == "timeout"
    final = dict(records[-1])
    assert final.pop("cost")["total"] == 0.0  # no request reported usage
    assert final == {"type": "turn_finished", "reason": "timeout", "final_text": ""}
    assert "timeout" in result.stderr


def test_usage_errors_exit_2(llm_server: OpenAIServer, workspace: Path) -> None:
    assert forge_run(llm_server, workspace).returncode == 2
    assert forge_run(llm_server, workspace, "--max-turns", "0", "x").returncode == 2
    assert forge_run(llm_server, workspace, "--task-file", "missing.md").returncode == 2
    assert forge_run(llm_server, workspace, "--timeout", "0", "x").returncode == 2
    (workspace / "task.md").write_text("task")
    both = forge_run(llm_server, workspace, "--task-file", "task.md", "x")
    assert both.returncode == 2 and "not both" in both.stderr
    resumed = subprocess.run(
        [sys.executable, "-m", "forge", "--resume", "20200101-000000-abcdef", "run", "x"],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "OPENAI_BASE_URL": llm_server.base_url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert resumed.returncode == 2 and "no session" in resumed.stderr
    assert not llm_server.requests  # nothing ran


def test_invalid_config_file_exits_2_naming_the_line(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    config = isolated_environment / "config" / "forge" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_text("llm:\n  model: gpt-4o\ncontext:\n  warning_threshold: 7\n")
    result = forge_run(llm_server, workspace, "hello")

    assert result.returncode == 2
    assert "config.yaml:4" in result.stderr and "warning_threshold" in result.stderr
    assert not llm_server.requests


def test_summarization_events_in_both_outputs(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "big.txt").write_text("line of text\n" * 200)

    def script() -> list[Reply]:
        return [
            ToolCalls([Call("read_file", {"path": "big.txt"})]),
            ToolCalls([Call("read_file", {"path": "big.txt", "start_line": 2})]),
            OVERFLOW,
            ToolCalls([Call("task_completion", {"result": "done"})]),
        ]

    def responder_for(replies: list[Reply]) -> Any:
        def respond(request: RecordedRequest) -> Reply:
            if not request.tools:  # a summarization request
                return Text("Summary: read big.txt twice.")
            return replies.pop(0)

        return respond

    llm_server.responder = responder_for(script())
    as_jsonl = forge_run(llm_server, workspace, "--output", "jsonl", "summarize big.txt")
    assert as_jsonl.returncode == 0, as_jsonl.stderr
    records = jsonl(as_jsonl)
    started = [r for r in records if r["type"] == "summarization_started"]
    assert started and started[0]["trigger"] == "overflow"
    assert set(started[0]) >= {"run_id", "strategy", "model", "current_tokens", "max_tokens"}
    completed = [r for r in records if r["type"] == "summarization_completed"]
    completed_fields = {"tokens_before", "tokens_after", "duration_s"}
    assert completed and completed_fields <= set(completed[0])

    llm_server.reset()
    llm_server.responder = responder_for(script())
    as_text = forge_run(llm_server, workspace, "summarize big.txt")
    assert as_text.returncode == 0, as_text.stderr
    context_lines = [line for line in as_text.stderr.splitlines() if line.startswith("[context]")]
    assert any("summarizing" in line and "overflow" in line for line in context_lines)
    assert len(context_lines) == len([r for r in records if r["type"].startswith("summarization_")])


def test_forge_sessions_lists_the_run(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(Text("done"))
    run = forge_run(llm_server, workspace, "--output", "jsonl", "list me later")
    session_id = jsonl(run)[0]["session_id"]
    listed = subprocess.run(
        [sys.executable, "-m", "forge", "sessions"],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listed.returncode == 0
    assert session_id in listed.stdout and "list me later" in listed.stdout
