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
from tests.agent.test_headless_sessions import environment, session_messages
from tests.support.openai_server import Call, OpenAIServer, ToolCalls

DEADLINE = 60.0

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
    started = json.loads(stdout.splitlines()[0])
    assert started["type"] == "run_started"
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
