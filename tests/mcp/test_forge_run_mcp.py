"""`forge run` as a real subprocess with a stdio MCP server from the project's
`.forge/mcp.yaml`: the model calls its tool, the secret never reaches output or files, and
the server process does not outlive Forge."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from forge.headless.run import HEADLESS_REJECTION
from tests.headless.test_headless import REPO_ROOT, forge_run, jsonl
from tests.mcp.conftest import SERVER_SCRIPT, alive, started_pids
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

SECRET = "mcp-run-secret-5e6f7a8b9c"


def write_project_servers(workspace: Path, log: Path) -> None:
    (workspace / ".forge").mkdir()
    entry = {
        "command": sys.executable,
        "args": [str(SERVER_SCRIPT), "stdio"],
        "env": {"TOKEN": "${FORGE_TEST_RUN_SECRET}", "FORGE_TEST_START_LOG": str(log)},
    }
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"tools": entry}}))


def test_forge_run_calls_an_mcp_tool_and_leaves_no_server_behind(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    log = tmp_path / "starts.log"
    write_project_servers(workspace, log)
    llm_server.enqueue(
        ToolCalls([Call("tools__read_env", {"name": "TOKEN"})]),
        ToolCalls([Call("task_completion", {"result": "read it"})]),
    )
    result = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--trust-workspace",
        "--output",
        "jsonl",
        "read the token",
        env={
            "FORGE_TEST_RUN_SECRET": SECRET,
            # A workspace definition reads only the variables the user allows it.
            "FORGE_TRUST__ENV_ALLOWLIST": '["FORGE_TEST_RUN_SECRET"]',
        },
    )

    assert result.returncode == 0, result.stderr
    records = jsonl(result)
    finished = [r for r in records if r["type"] == "tool_call_finished"]
    assert finished and finished[0]["name"] == "tools__read_env"
    assert not finished[0]["is_error"]
    sent = [tool["function"]["name"] for tool in llm_server.requests[0].body["tools"]]
    assert "tools__read_env" in sent
    # The model got the value, but no output line and no file under Forge's home shows it.
    assert SECRET not in result.stdout and SECRET not in result.stderr
    for path in isolated_environment.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    (pid,) = started_pids(log)
    assert not alive(pid)


def test_forge_run_without_yes_rejects_mcp_calls_like_any_mutating_tool(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    write_project_servers(workspace, tmp_path / "starts.log")
    llm_server.enqueue(
        ToolCalls([Call("tools__echo", {"text": "hi"})]),
        ToolCalls([Call("task_completion", {"result": "gave up"})]),
    )
    result = forge_run(llm_server, workspace, "--trust-workspace", "--output", "jsonl", "echo")

    assert result.returncode == 0, result.stderr
    finished = [r for r in jsonl(result) if r["type"] == "tool_call_finished"]
    assert finished[0]["name"] == "tools__echo" and finished[0]["is_error"]
    assert finished[0]["result"] == HEADLESS_REJECTION  # not "rejected by user" (ADR 0015)


def test_a_sigterm_to_forge_run_leaves_no_server_behind(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "starts.log"
    write_project_servers(workspace, log)
    llm_server.enqueue(ToolCalls([Call("tools__hang", {})]), Text("late", delay=120))
    environment = dict(os.environ)
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test-sigterm-0123456789",
        FORGE_LLM__MAX_RETRIES="0",
    )
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "forge", "run", "--yes", "--trust-workspace"),
            *("--output", "jsonl", "hang"),
        ],
        cwd=workspace,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the server is up and busy in a call
            if '"tool_call_started"' in line:
                break
        (pid,) = started_pids(log)
        assert alive(pid)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        deadline = time.monotonic() + 30
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_forge_run_says_which_mcp_server_failed_and_still_runs(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "mcp.yaml").write_text(
        "mcp_servers:\n  broken:\n    command: /nonexistent/mcp-server\n"
    )
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done anyway"})]))
    result = forge_run(llm_server, workspace, "--trust-workspace", "--output", "jsonl", "go")

    assert result.returncode == 0, result.stderr
    assert (
        "forge run: MCP server broken failed to start: command not found "
        "'/nonexistent/mcp-server'. Its tools are unavailable." in result.stderr
    )
    (record,) = [r for r in jsonl(result) if r["type"] == "mcp_server"]
    assert record["server"] == "broken" and record["kind"] == "start_failed"
    assert record["reason"] == "command not found '/nonexistent/mcp-server'"
    # The notice comes before the turn's records, as it happened.
    types = [r["type"] for r in jsonl(result)]
    assert types.index("mcp_server") < types.index("turn_finished")
