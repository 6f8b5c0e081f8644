"""`forge run --mode …` as a real subprocess against the loopback server (docs/adr/0029)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from forge.headless.run import HEADLESS_REJECTION
from tests.headless.test_headless import forge_run, jsonl
from tests.mcp.conftest import SERVER_SCRIPT
from tests.support.openai_server import Call, OpenAIServer, ToolCalls


def _finished(records: list[dict[str, object]]) -> list[dict[str, object]]:
    return [
        r for r in records if r["type"] == "tool_call_finished" and r["name"] != "task_completion"
    ]


def test_read_only_mode_refuses_a_write_and_leaves_the_file_untouched(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("original\n")
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "notes.txt", "content": "changed\n"})]),
        ToolCalls([Call("execute_command", {"command": "touch made.txt"})]),
        ToolCalls([Call("task_completion", {"result": "planned only"})]),
    )
    result = forge_run(llm_server, workspace, "--mode", "read-only", "--output", "jsonl", "edit")

    assert result.returncode == 0, result.stderr
    write, command = _finished(jsonl(result))
    assert write["name"] == "write_file" and write["is_error"]
    assert str(write["result"]).startswith("read-only mode: changing files is not allowed")
    assert command["name"] == "execute_command" and command["is_error"]
    assert str(command["result"]).startswith("read-only mode: running commands")
    assert target.read_text() == "original\n"
    assert not (workspace / "made.txt").exists()
    # The model was told why, in the tool result it reads.
    tool_messages = [m for m in llm_server.requests[1].messages if m["role"] == "tool"]
    assert "read-only mode" in tool_messages[-1]["content"]


def test_accept_edits_mode_writes_without_asking_but_rejects_commands_headless(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "new.txt", "content": "hello\n"})]),
        ToolCalls([Call("execute_command", {"command": "touch made.txt"})]),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    result = forge_run(llm_server, workspace, "--mode", "accept-edits", "--output", "jsonl", "x")

    assert result.returncode == 0, result.stderr
    write, command = _finished(jsonl(result))
    assert not write["is_error"] and (workspace / "new.txt").read_text() == "hello\n"
    assert command["is_error"] and command["result"] == HEADLESS_REJECTION
    assert not (workspace / "made.txt").exists()


def test_yes_cannot_be_combined_with_another_mode(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    result = forge_run(llm_server, workspace, "--yes", "--mode", "read-only", "x")
    assert result.returncode == 2
    assert "--yes means --mode auto" in result.stderr


def test_read_only_mode_runs_only_the_mcp_tools_their_server_marks_read_only(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / ".forge").mkdir()
    entry = {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"]}
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"tools": entry}}))
    llm_server.enqueue(
        ToolCalls([Call("tools__peek", {"text": "abc"})]),
        ToolCalls([Call("tools__echo", {"text": "abc"})]),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    # The whole server is auto-approved: only the mode stands between echo and running.
    result = forge_run(
        llm_server,
        workspace,
        "--mode",
        "read-only",
        "--trust-workspace",
        "--output",
        "jsonl",
        "look",
        env={"FORGE_TOOLS__AUTO_APPROVE": '["tools__*"]'},
    )

    assert result.returncode == 0, result.stderr
    peek, echo = _finished(jsonl(result))
    assert peek["name"] == "tools__peek" and not peek["is_error"]
    assert "cba" in str(peek["result"])
    assert echo["name"] == "tools__echo" and echo["is_error"]
    assert str(echo["result"]).startswith("read-only mode: tools__echo is not marked read-only")
