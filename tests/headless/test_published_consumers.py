"""`forge run`'s compatible formats read by consumers written only from each tool's published
schema (`tests/support/published_consumers.py`): a run that plans, writes a new file, has a
command refused (no approval in accept-edits mode) and answers, with cached prompt tokens.
The Claude Code reader must find the answer, every tool_use answered, the denial by
`tool_use_id` and usage that sums without double counting; the Codex reader the same run as
its items."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.headless.test_headless import forge_run
from tests.support.openai_server import Call, Fault, OpenAIServer, Text, ToolCalls
from tests.support.published_consumers import ClaudeCodeConsumer, CodexExecConsumer

PLAN = [
    {"step": "write new.txt", "status": "in_progress"},
    {"step": "check it", "status": "pending"},
]
DONE = [{"step": "write new.txt", "status": "done"}, {"step": "check it", "status": "done"}]


def script(server: OpenAIServer) -> None:
    server.enqueue(
        ToolCalls(
            [
                Call("update_plan", {"plan": PLAN}, id="call_plan"),
                Call("write_file", {"path": "new.txt", "content": "new\n"}, id="call_write"),
                Call("execute_command", {"command": "cat new.txt"}, id="call_cmd"),
            ],
            text="Planning and writing.",
            prompt_tokens=1000,
            cached_tokens=600,
            completion_tokens=20,
        ),
        ToolCalls(
            [Call("update_plan", {"plan": DONE}, id="call_done")],
            prompt_tokens=1100,
            cached_tokens=900,
            completion_tokens=10,
        ),
        Text("Done: new.txt written.", prompt_tokens=1200, cached_tokens=1000, completion_tokens=8),
    )


def run(server: OpenAIServer, workspace: Path, *flags: str) -> list[dict[str, Any]]:
    script(server)
    result = forge_run(server, workspace, "--mode", "accept-edits", *flags, "write new.txt")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_a_claude_code_consumer_reads_stream_json(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    messages = run(
        llm_server, workspace, "--output-format", "stream-json", "--include-partial-messages"
    )
    consumer = ClaudeCodeConsumer().read(messages)

    assert consumer.init["permissionMode"] == "acceptEdits"
    assert consumer.result["result"] == "Done: new.txt written."
    assert "".join(consumer.streamed_text) == "".join(consumer.text)
    assert set(consumer.tool_uses) == set(consumer.tool_results)  # every call answered
    assert consumer.tool_results["call_cmd"]["is_error"] is True
    (denial,) = consumer.result["permission_denials"]
    assert denial["tool_use_id"] == "call_cmd" and denial["tool_name"] == "execute_command"
    assert denial["tool_input"] == {"command": "cat new.txt"}
    # Claude's convention: uncached input apart from the cache reads; the result's sums are
    # the messages' sums (Forge's own input count includes the cached tokens).
    usage = consumer.result["usage"]
    assert usage["input_tokens"] == (1000 - 600) + (1100 - 900) + (1200 - 1000)
    assert usage["cache_read_input_tokens"] == 600 + 900 + 1000
    assert usage == {name: consumer.message_usage[name] for name in usage}
    assert "tool_call_finished" not in consumer.skipped  # said as a tool_result, not twice
    assert (workspace / "new.txt").read_text() == "new\n"


def test_a_claude_code_consumer_reads_the_json_result(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (result,) = run(llm_server, workspace, "--output-format", "json")
    consumer = ClaudeCodeConsumer().read_result(result)

    assert consumer.result["subtype"] == "success"
    assert consumer.result["permission_denials"][0]["tool_use_id"] == "call_cmd"


def test_a_codex_exec_consumer_reads_codex_json(llm_server: OpenAIServer, workspace: Path) -> None:
    events = run(llm_server, workspace, "--output-format", "codex-json")
    consumer = CodexExecConsumer().read(events)

    assert consumer.thread_id
    assert consumer.of_type("agent_message")[-1]["text"] == "Done: new.txt written."
    (change,) = consumer.of_type("file_change")
    assert change["changes"] == [{"path": "new.txt", "kind": "add"}]
    assert change["status"] == "completed"
    (command,) = consumer.of_type("command_execution")
    assert command["command"] == "cat new.txt" and command["status"] == "declined"
    (plan,) = consumer.of_type("todo_list")
    assert plan["items"] == [
        {"text": "write new.txt", "completed": True},
        {"text": "check it", "completed": True},
    ]
    assert [e["type"] for e in events].count("item.updated") == 1
    # Codex's convention: input_tokens counts the cached ones too.
    assert consumer.usage == {
        "input_tokens": 3300,
        "cached_input_tokens": 2500,
        "output_tokens": 38,
    }


def test_the_budget_stop_is_claude_codes_error_max_budget_usd(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls(
        [Call("read_file", {"path": "a.txt"})], prompt_tokens=1_000_000, completion_tokens=10
    )
    result = forge_run(
        llm_server, workspace, "--max-budget-usd", "0.1", "--output-format", "stream-json", "x"
    )

    assert result.returncode == 4, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    consumer = ClaudeCodeConsumer().read(messages)
    assert consumer.result["subtype"] == "error_max_budget_usd"
    assert consumer.result["is_error"] is True and consumer.result["errors"]
    assert consumer.result["exit_code"] == 4  # Forge's extra


def test_a_failed_run_is_codexs_turn_failed_with_the_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Fault(500, {"error": {"message": "the server broke"}}))
    result = forge_run(llm_server, workspace, "--output-format", "codex-json", "x")

    assert result.returncode == 1
    events = [json.loads(line) for line in result.stdout.splitlines()]
    consumer = CodexExecConsumer().read(events)
    assert consumer.failure is not None and "the server broke" in consumer.failure
