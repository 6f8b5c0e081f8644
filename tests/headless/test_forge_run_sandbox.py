"""`forge run` with the command sandbox, black-box (issue 39, docs/adr/0053): the first
record says what confines the commands; a model's command reads no provider key, from its
environment or Forge's; asking to run unconfined is refused in auto mode unless
`tools.sandbox.allow_unconfined`, and then reaches the host; `tools.sandbox.auto_allow` lets
a confined command run in ask mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.agent.sandbox.support import needs_bubblewrap
from tests.headless.test_headless import forge_run, stream_json
from tests.support.openai_server import Call, OpenAIServer, ToolCalls

ANTHROPIC_CANARY = "sk-ant-sandbox-canary-77aa"


def finished_calls(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [record for record in records if record["type"] == "tool_call_finished"]


def connect_command(server: OpenAIServer) -> str:
    port = server.base_url.split(":")[2].split("/")[0]
    return (
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
        f"{port}), timeout=3); print('connected')\""
    )


@needs_bubblewrap
def test_the_first_record_says_the_sandbox_and_no_key_reaches_a_command(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "env; cat /proc/$PPID/environ; echo end"})]),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    run = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--output",
        "jsonl",
        "look",
        env={"ANTHROPIC_API_KEY": ANTHROPIC_CANARY},
    )
    assert run.returncode == 0, run.stderr
    records = stream_json(run)
    assert records[0]["type"] == "init"
    assert records[0]["sandbox"] == {"enabled": True, "mechanism": "bubblewrap", "network": False}
    output = finished_calls(records)[0]["result"]
    assert "end" in output
    assert ANTHROPIC_CANARY not in output
    assert "OPENAI_API_KEY" not in output
    for request in llm_server.requests:
        assert ANTHROPIC_CANARY not in request.text()


def test_with_the_sandbox_off_the_record_says_so_and_keys_stay_hidden(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "env; echo end"})]),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    run = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--output",
        "jsonl",
        "look",
        env={"ANTHROPIC_API_KEY": ANTHROPIC_CANARY, "FORGE_TOOLS__SANDBOX__MODE": "false"},
    )
    assert run.returncode == 0, run.stderr
    records = stream_json(run)
    assert records[0]["sandbox"] == {"enabled": False, "mechanism": "none", "network": True}
    assert ANTHROPIC_CANARY not in finished_calls(records)[0]["result"]
    assert "warning" not in run.stderr  # turned off on purpose: nothing to warn about


@needs_bubblewrap
def test_auto_mode_refuses_an_unconfined_command_unless_allowed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    unconfined = Call(
        "execute_command",
        {"command": connect_command(llm_server), "unconfined": True, "reason": "reach the API"},
    )
    llm_server.enqueue(
        ToolCalls([unconfined]), ToolCalls([Call("task_completion", {"result": "done"})])
    )
    refused = forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "go")
    assert refused.returncode == 0, refused.stderr
    result = finished_calls(stream_json(refused))[0]
    assert result["is_error"]
    assert "tools.sandbox.allow_unconfined" in result["result"]
    assert "connected" not in result["result"]

    llm_server.enqueue(
        ToolCalls([unconfined]), ToolCalls([Call("task_completion", {"result": "done"})])
    )
    allowed = forge_run(
        llm_server,
        workspace,
        "--yes",
        "--output",
        "jsonl",
        "go",
        env={"FORGE_TOOLS__SANDBOX__ALLOW_UNCONFINED": "true"},
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "connected" in finished_calls(stream_json(allowed))[0]["result"]


@needs_bubblewrap
def test_ask_mode_denies_unconfined_and_auto_allow_runs_confined_commands(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("execute_command", {"command": "echo confined > made.txt"}),
                Call(
                    "execute_command",
                    {"command": "echo out > made2.txt", "unconfined": True, "reason": "why not"},
                ),
            ]
        ),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    run = forge_run(
        llm_server,
        workspace,
        "--mode",
        "ask",
        "--output",
        "jsonl",
        "go",
        env={"FORGE_TOOLS__SANDBOX__AUTO_ALLOW": "true"},
    )
    assert run.returncode == 0, run.stderr
    confined, unconfined = finished_calls(stream_json(run))[:2]
    assert not confined["is_error"]
    assert (workspace / "made.txt").read_text() == "confined\n"
    assert unconfined["is_error"]
    assert "runs outside the sandbox" in unconfined["result"]
    assert "why not" in unconfined["result"]
    assert not (workspace / "made2.txt").exists()
