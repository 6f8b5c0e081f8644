"""`forge run` (a real subprocess) runs the same hooks as the TUI, through the same core path
(issue 29, docs/adr/0043): jsonl records and stderr lines for what hooks said, `--no-hooks`,
`hooks.disabled`, and project hooks only in a trusted workspace."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.hooks.support import command_hook, write_project_hooks, write_user_hooks
from tests.agent.hooks.turns_support import emit_json, recorded, recorder
from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

GUARD = command_hook("echo 'no writes in CI' >&2; exit 2", "Write")


def enqueue_write(server: OpenAIServer) -> None:
    server.enqueue(
        ToolCalls([Call("write_file", {"path": "a.txt", "content": "x"})]), Text("finished")
    )


def test_a_blocking_hook_in_stream_json(llm_server: OpenAIServer, workspace: Path) -> None:
    write_user_hooks({"PreToolUse": [GUARD]})
    enqueue_write(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "write a.txt")
    assert result.returncode == 0, result.stderr
    assert not (workspace / "a.txt").exists()
    records = jsonl(result)
    [blocked] = [r for r in records if r["type"] == "hook_blocked"]
    assert blocked["event"] == "PreToolUse"
    assert blocked["reason"] == "no writes in CI"
    assert blocked["hook"].endswith("exit 2")
    [finished] = [r for r in records if r["type"] == "tool_call_finished"]
    assert finished["is_error"] and "no writes in CI" in finished["result"]
    assert "no writes in CI" in llm_server.requests[1].text()
    order = [r["type"] for r in records]
    assert order.index("hook_blocked") < order.index("tool_call_finished")


def test_text_mode_prints_hook_lines_on_stderr(llm_server: OpenAIServer, workspace: Path) -> None:
    write_user_hooks(
        {
            "PreToolUse": [GUARD],
            "Stop": [command_hook("echo all checks passed")],
            "SessionStart": [command_hook("./missing-start-hook.sh")],
        }
    )
    enqueue_write(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "write a.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "finished"
    assert "[hook] PreToolUse blocked by " in result.stderr
    assert ": no writes in CI" in result.stderr
    assert "[hook] Stop " in result.stderr and ": all checks passed" in result.stderr
    assert "[hook] warning: hook " in result.stderr
    assert "./missing-start-hook.sh failed (exit 127)" in result.stderr


def test_no_hooks_and_hooks_disabled_run_none(llm_server: OpenAIServer, workspace: Path) -> None:
    write_user_hooks({"PreToolUse": [GUARD]})
    enqueue_write(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "--no-hooks", "--output", "jsonl", "go")
    assert result.returncode == 0, result.stderr
    assert (workspace / "a.txt").read_text() == "x"
    assert not [r for r in jsonl(result) if r["type"].startswith("hook_")]

    (workspace / "a.txt").unlink()
    enqueue_write(llm_server)
    disabled = forge_run(
        llm_server, workspace, "--yes", "go", env={"FORGE_HOOKS__DISABLED": "true"}
    )
    assert disabled.returncode == 0, disabled.stderr
    assert (workspace / "a.txt").read_text() == "x"
    assert "[hook]" not in disabled.stderr


def test_an_untrusted_project_hook_does_not_run_unless_trusted_for_the_run(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "project-hook.jsonl"
    write_project_hooks(workspace, {"UserPromptSubmit": [command_hook(recorder(log))]})
    llm_server.enqueue(Text("one"))
    untrusted = forge_run(llm_server, workspace, "--output", "jsonl", "hello")
    assert untrusted.returncode == 0, untrusted.stderr
    assert recorded(log) == []
    assert ".forge/hooks.json not used: this workspace is not trusted" in untrusted.stderr
    llm_server.enqueue(Text("two"))
    trusted = forge_run(llm_server, workspace, "--trust-workspace", "hello again")
    assert trusted.returncode == 0, trusted.stderr
    assert [i["prompt"] for i in recorded(log)] == ["hello again"]


def test_a_rewritten_command_is_the_recorded_call(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    rewrite = emit_json({"hookSpecificOutput": {"updatedInput": {"command": "echo safer"}}})
    write_user_hooks({"PreToolUse": [command_hook(rewrite, "Bash")]})
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "rm -rf build"})]), Text("done")
    )
    result = forge_run(llm_server, workspace, "--yes", "--output", "jsonl", "clean")
    assert result.returncode == 0, result.stderr
    records = jsonl(result)
    started = [r for r in records if r["type"] == "tool_call_started"]
    assert [json.loads(r["arguments"])["command"] for r in started] == ["echo safer"]
    [finished] = [r for r in records if r["type"] == "tool_call_finished"]
    assert "safer" in finished["result"]


def test_a_blocked_prompt_ends_the_run_without_a_request(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_user_hooks(
        {"UserPromptSubmit": [command_hook(emit_json({"decision": "block", "reason": "frozen"}))]}
    )
    result = forge_run(llm_server, workspace, "--output", "jsonl", "deploy")
    assert result.returncode == 1
    assert llm_server.requests == []
    records = jsonl(result)
    assert [r["reason"] for r in records if r["type"] == "hook_blocked"] == ["frozen"]
    assert [r["reason"] for r in records if r["type"] == "turn_finished"] == ["hook_blocked"]
