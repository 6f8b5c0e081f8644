"""Nothing a background command started outlives Forge (issue 40): not after SIGTERM, not
after SIGKILL — and the next start says which were left running and ends any survivor, from
the records file (docs/adr/0057). Real `forge run` subprocesses against the loopback server;
the sandbox is off so the command's host process group can be watched (as in
test_exit_signals.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.agent.tools.background_records import reap_stale, records_dir
from tests.agent.test_exit_signals import (
    DEADLINE,
    SIGNALLABLE_FORGE,
    environment,
    live_members,
    wait_until,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

SERVER = "echo $$ > group.txt; sleep 1000 & sleep 1001"
"""A background command of three processes in one group."""


@pytest.fixture
def forge_with_background(
    llm_server: OpenAIServer, workspace: Path
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`forge run --yes` whose model started `SERVER` in the background and then runs a long
    foreground command (Forge stays busy); yields Forge's process and the background group."""
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": SERVER, "background": True})]),
        ToolCalls([Call("execute_command", {"command": "sleep 1002"})]),
    )
    process = subprocess.Popen(
        [sys.executable, "-c", SIGNALLABLE_FORGE, "run", "--yes", "--output", "jsonl", "go"],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    group: list[int] = []
    group_file = workspace / "group.txt"
    try:

        def started() -> bool:
            text = group_file.read_text().strip() if group_file.exists() else ""
            if text and not group:
                group.append(int(text))
            return bool(group) and len(live_members(group[0])) >= 3 and _recorded()

        wait_until(started, "the background command's processes started and were recorded")
        yield process, group[0]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        for pid in live_members(group[0]) if group else []:
            os.kill(pid, signal.SIGKILL)


def _recorded() -> bool:
    return any(records_dir().glob("*.json")) if records_dir().exists() else False


def test_sigterm_ends_the_background_command_and_says_so(
    forge_with_background: tuple[subprocess.Popen[str], int],
) -> None:
    process, group = forge_with_background
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=DEADLINE)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    wait_until(lambda: not live_members(group), "every process of the background group ended")
    assert f"ended background command bg1 `{SERVER}` (exit)" in stderr
    assert reap_stale() == []  # it ended itself: nothing stale for the next start


def test_kill_9_leaves_nothing_and_the_next_start_says_which_were_running(
    forge_with_background: tuple[subprocess.Popen[str], int],
    llm_server: OpenAIServer,
    workspace: Path,
) -> None:
    process, group = forge_with_background
    (record,) = records_dir().glob("*.json")
    assert json.loads(record.read_text())["state"] == "running"
    process.kill()
    process.communicate(timeout=DEADLINE)
    wait_until(lambda: not live_members(group), "the watchdog ended the orphaned group")

    llm_server.enqueue(Text("picked up"))
    continued = subprocess.run(
        [sys.executable, "-m", "forge", "--continue", "run", "--yes", "go on"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert continued.returncode == 0, continued.stderr
    stderr = continued.stderr
    assert "A Forge that stopped without ending them left background commands" in stderr
    assert f"bg1 `{SERVER}`" in stderr
    # The resumed session names what it had running; its record is then gone.
    assert "When this session stopped, background commands were running" in stderr
    assert not list(records_dir().glob("*.json"))
