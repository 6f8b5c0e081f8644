"""SIGINT, SIGTERM, SIGHUP and SIGKILL of `forge run` during a command: nothing the command
started survives, and a caught signal leaves a valid session and exits 128 + its number.

Real `forge run` subprocesses against the loopback server; each waits for a condition with a
generous deadline and fails if it passes (no clock is asserted)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from forge.agent.exit_signals import exit_code_for
from forge.context.conversation import CANCELLED_RESULT
from tests.headless.test_headless_sessions import environment as headless_environment
from tests.headless.test_headless_sessions import session_messages
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

DEADLINE = 60.0


def environment(llm_server: OpenAIServer) -> dict[str, str]:
    """`forge run`'s environment with the command sandbox off: these tests watch the command's
    host process group (`$$`); the sandbox's own ending of everything is in
    tests/agent/sandbox/test_escapes.py."""
    return {**headless_environment(llm_server), "FORGE_TOOLS__SANDBOX__MODE": "off"}


SIGNALLABLE_FORGE = """
import runpy, signal
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
runpy.run_module("forge", run_name="__main__", alter_sys=True)
"""
"""`python -m forge` with the three signals at their defaults, even when the test run was
started with some of them ignored (a background job ignores SIGINT, nohup SIGHUP), which every
child would otherwise inherit."""

COMMAND = "echo $$ > group.txt; sleep 1001 & sh -c 'sleep 1000'"
"""A shell (the group leader, whose pid is the group id), a background child and a nested
shell with its own child: four processes in one group."""


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() >= deadline:
            pytest.fail(f"not within {DEADLINE:g} s: {what}")
        time.sleep(0.05)


def live_members(group: int) -> list[int]:
    """Pids of the processes in `group` that are alive (zombies are dead)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ")".
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


@pytest.fixture
def running_forge(
    llm_server: OpenAIServer, workspace: Path
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`forge run --yes` whose model ran `COMMAND`; yields the process and the command's
    group once all four processes of the group are running."""
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": COMMAND})]))
    process = subprocess.Popen(
        [sys.executable, "-c", SIGNALLABLE_FORGE, "run", "--yes", "--output", "jsonl", "wait"],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    group_file = workspace / "group.txt"
    group: list[int] = []
    try:

        def started() -> bool:
            text = group_file.read_text().strip() if group_file.exists() else ""
            if text and not group:
                group.append(int(text))
            return bool(group) and len(live_members(group[0])) >= 4

        wait_until(started, "the command's four processes started")
        yield process, group[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        if group:
            for pid in live_members(group[0]):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_kills_the_command_group_and_exits_with_its_code(
    running_forge: tuple[subprocess.Popen[str], int], number: signal.Signals
) -> None:
    process, group = running_forge
    process.send_signal(number)
    try:
        stdout, stderr = process.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        pytest.fail(f"forge still running {DEADLINE:g} s after {number.name}")

    assert process.returncode == exit_code_for(number) == 128 + number, stderr
    assert f"interrupted ({number.name})" in stderr
    wait_until(lambda: not live_members(group), "every process of the command's group ended")
    records = [json.loads(line) for line in stdout.splitlines()]
    assert records[0]["type"] == "init"  # ADR 0015: init first, result last, also on signals
    assert records[-1]["type"] == "result" and records[-1]["subtype"] == "error_signal"
    assert records[-1]["exit_code"] == 128 + number
    started = next(record for record in records if record["type"] == "run_started")
    messages = session_messages(started["session_id"])
    assert messages[-1] == ("tool", CANCELLED_RESULT)


def test_kill_9_of_forge_still_ends_the_command_group(
    running_forge: tuple[subprocess.Popen[str], int],
) -> None:
    process, group = running_forge
    process.kill()
    process.communicate(timeout=DEADLINE)
    assert process.returncode == -signal.SIGKILL
    wait_until(lambda: not live_members(group), "the watchdog ended the orphaned group")


def assert_valid_request(messages: list[dict[str, object]]) -> None:
    """Every tool call in a sent message list is answered, in order, before the next turn."""
    pending: list[object] = []
    for message in messages:
        if message["role"] == "tool":
            assert pending and message["tool_call_id"] == pending.pop(0), messages
            continue
        assert not pending, f"unanswered tool calls {pending} in {messages}"
        calls = message.get("tool_calls") or []
        assert isinstance(calls, list)
        pending = [call["id"] for call in calls]
        if message["role"] == "assistant":
            assert message.get("content") or calls, "an empty assistant message was sent"
    assert not pending


def test_kill_9_mid_tool_then_continue_sends_a_valid_conversation(
    running_forge: tuple[subprocess.Popen[str], int],
    llm_server: OpenAIServer,
    workspace: Path,
) -> None:
    process, group = running_forge
    process.kill()
    process.communicate(timeout=DEADLINE)
    wait_until(lambda: not live_members(group), "the watchdog ended the orphaned group")

    llm_server.enqueue(Text("picked up where we were"))
    continued = subprocess.run(
        [sys.executable, "-m", "forge", "--continue", "run", "--yes", "go on"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert continued.returncode == 0, continued.stderr
    sent = llm_server.requests[-1].messages
    assert_valid_request(sent)
    assert sent[-1] == {"role": "user", "content": "go on"}
    assert any(m["role"] == "tool" for m in sent)  # the killed call got a result


def test_kill_9_mid_stream_then_continue_sends_a_valid_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("a slow answer " * 200, chunk_size=4, chunk_delay=0.05))
    process = subprocess.Popen(
        [sys.executable, "-m", "forge", "run", "--output", "jsonl", "stream slowly"],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        # The first streamed text has been printed: the answer is mid-stream.
        while True:
            line = process.stdout.readline()
            if not line:
                pytest.fail(f"forge ended before streaming: {process.communicate()[1]}")
            if json.loads(line)["type"] == "message_delta":
                break
        process.kill()
        process.communicate(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    llm_server.reset()
    llm_server.enqueue(Text("second try"))
    continued = subprocess.run(
        [sys.executable, "-m", "forge", "--continue", "run", "again"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert continued.returncode == 0, continued.stderr
    sent = llm_server.requests[-1].messages
    assert_valid_request(sent)
    assert [m["content"] for m in sent if m["role"] == "user"] == ["stream slowly", "again"]
