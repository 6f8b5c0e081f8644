"""`forge run` with a background command (issue 40, docs/adr/0057): the call that started it
stays in progress, its output lines are streamed as they come (the test reads the first one
from the live stream before it lets the command go on) and its end is said with its exit
code, in text and in forge-jsonl; codex-json keeps the command's item in progress, stream-json
carries Forge's records a Claude Code consumer skips. Real `forge run` subprocesses against
the loopback server, real commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.headless.test_headless import API_KEY
from tests.headless.test_headless_sessions import environment
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.support.published_consumers import ClaudeCodeConsumer, CodexExecConsumer

DEADLINE = 60.0
BACKGROUND = (
    "for i in 1 2 3; do echo line$i; sleep 0.3; done; "
    "until [ -e go ]; do sleep 0.05; done; echo last; touch bgdone; exit 3"
)
"""Prints three lines over about a second, then waits for the test (which lets it go on
once it saw the first line in the run's output), prints one more and exits 3."""
FOREGROUND = "until [ -e bgdone ]; do sleep 0.05; done; sleep 1; echo foreground done"
"""Keeps the turn running until the background command is done (and a second for it to
exit), so its end is its own and not the run's."""


def start_forge(
    llm_server: OpenAIServer, workspace: Path, *format_args: str
) -> subprocess.Popen[str]:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": BACKGROUND, "background": True})]),
        ToolCalls([Call("execute_command", {"command": FOREGROUND})]),
        Text("all done"),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "forge", "run", "--yes", *format_args, "run the watcher"],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_until(stream: IO[str] | None, marker: str) -> list[str]:
    """Lines of the live stream up to the first one holding `marker`."""
    assert stream is not None
    lines: list[str] = []
    for line in stream:
        lines.append(line)
        if marker in line:
            return lines
    pytest.fail(f"the stream ended without {marker!r}: {''.join(lines)}")


def run_to_end(process: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        stdout, stderr = process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return stdout, stderr


def test_text_output_streams_a_background_commands_lines_and_its_end(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    process = start_forge(llm_server, workspace)
    try:
        early = read_until(process.stderr, "[bg1] line1")  # streamed while it runs
        (workspace / "go").touch()
    except BaseException:
        process.kill()
        raise
    stdout, rest = run_to_end(process)
    assert process.returncode == 0, "".join(early) + rest
    stderr = "".join(early) + rest
    assert "  ⧗ running in the background as bg1" in stderr
    shown = [line for line in stderr.splitlines() if line.startswith("  [bg1] ")]
    assert shown == ["  [bg1] line1", "  [bg1] line2", "  [bg1] line3", "  [bg1] last"]
    assert "■ background bg1 ended: exited 3" in stderr
    assert stdout == "all done\n"


def test_forge_jsonl_streams_background_output_records_and_the_end(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    process = start_forge(llm_server, workspace, "--output-format", "forge-jsonl")
    try:
        early = read_until(process.stdout, '"background_output"')
        (workspace / "go").touch()
    except BaseException:
        process.kill()
        raise
    stdout, stderr = run_to_end(process)
    assert process.returncode == 0, stderr
    records = [json.loads(line) for line in "".join(early).splitlines() + stdout.splitlines()]
    kinds = [record["type"] for record in records]
    started = next(
        record
        for record in records
        if record["type"] == "tool_call_finished" and "bg1" in record["result"]
    )
    output = [record for record in records if record["type"] == "background_output"]
    assert {(record["call_id"], record["command_id"]) for record in output} == {
        (started["call_id"], "bg1")
    }
    assert "".join(record["text"] for record in output) == "line1\nline2\nline3\nlast\n"
    (ended,) = [record for record in records if record["type"] == "background_ended"]
    assert ended == {
        "type": "background_ended",
        "call_id": started["call_id"],
        "command_id": "bg1",
        "state": "exited 3",
        "exit_code": 3,
    }
    # The first lines came while the command (and the turn) still ran; the end before `result`.
    assert kinds.index("background_output") < kinds.index("background_ended")
    assert kinds.index("background_output") < kinds.index("turn_finished")
    assert kinds.index("background_ended") < kinds.index("result") == len(kinds) - 1


def test_a_background_command_still_running_at_the_end_is_ended_and_said(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [Call("execute_command", {"command": "echo up; exec sleep 1000", "background": True})]
        ),
        ToolCalls([Call("execute_command", {"command": "echo next"})]),
        Text("left it running"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "forge", "run", "--yes", "--output", "jsonl", "start it"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [record["type"] for record in records]
    (ended,) = [record for record in records if record["type"] == "background_ended"]
    assert ended["state"].startswith("exit (exit code ") and ended["exit_code"] != 0
    assert kinds.index("turn_finished") < kinds.index("background_ended") < kinds.index("result")
    assert "ended background command bg1" in done.stderr


def run_released(
    llm_server: OpenAIServer, workspace: Path, marker: str, *format_args: str
) -> list[dict[str, Any]]:
    """A run in a JSON format whose background command goes on once `marker` was streamed."""
    process = start_forge(llm_server, workspace, *format_args)
    try:
        early = read_until(process.stdout, marker)
        (workspace / "go").touch()
    except BaseException:
        process.kill()
        raise
    stdout, stderr = run_to_end(process)
    assert process.returncode == 0, stderr
    return [json.loads(line) for line in "".join(early).splitlines() + stdout.splitlines()]


def test_codex_json_keeps_the_command_item_in_progress_until_the_command_ends(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    events = run_released(llm_server, workspace, "line1", "--output-format", "codex-json")
    consumer = CodexExecConsumer().read(events)  # every item ends; known types and statuses
    background = next(
        item for item in consumer.of_type("command_execution") if item["command"] == BACKGROUND
    )
    assert background["status"] == "failed" and background["exit_code"] == 3
    assert background["aggregated_output"] == "line1\nline2\nline3\nlast\n"
    updates = [
        event["item"]
        for event in events
        if event["type"] == "item.updated" and event["item"]["id"] == background["id"]
    ]
    assert updates and all(item["status"] == "in_progress" for item in updates)
    assert updates[1]["aggregated_output"].startswith("line1\n")  # streamed as it came
    kinds = [event["type"] for event in events]
    assert kinds[-1] == "turn.completed"


def test_stream_json_carries_forges_background_records_a_claude_consumer_skips(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    messages = run_released(
        llm_server, workspace, '"background_output"', "--output-format", "stream-json"
    )
    consumer = ClaudeCodeConsumer().read(messages)
    assert "background_output" in consumer.skipped and "background_ended" in consumer.skipped
    output = [m for m in messages if m["type"] == "background_output"]
    assert "".join(m["text"] for m in output) == "line1\nline2\nline3\nlast\n"
    (ended,) = [m for m in messages if m["type"] == "background_ended"]
    assert ended["exit_code"] == 3 and ended["call_id"] in consumer.tool_results


def test_background_lines_are_masked_and_terminal_safe_in_text(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    command = f"printf 'key={API_KEY}\\n\\033]0;title\\a\\033[31mred\\n'"
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": command, "background": True})]),
        ToolCalls([Call("execute_command", {"command": "sleep 1"})]),
        Text("done"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "forge", "run", "--yes", "print it"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    shown = [line for line in done.stderr.splitlines() if line.startswith("  [bg1] ")]
    assert shown[0].startswith("  [bg1] key=") and API_KEY not in shown[0]
    assert any("red" in line for line in shown)
    assert API_KEY not in done.stderr and "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "■ background bg1 ended: exited 0" in done.stderr
