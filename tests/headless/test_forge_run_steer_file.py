"""`forge run --steer-file` (issue 40): a line written to the FIFO or appended to the file
while the model's command runs is added to the turn as a user message, and the very next
request carries it, before the final answer (docs/adr/0057). Real `forge run` subprocesses
against the loopback server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agent.test_exit_signals import assert_valid_request
from tests.headless.test_headless_sessions import environment
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

DEADLINE = 60.0
STEER = "stop, use the v2 API instead"
WAITING_COMMAND = "until [ -e go ]; do sleep 0.05; done; sleep 1; echo called v1"
"""Runs until the test has written the steering line (then a second for Forge to read it)."""


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() >= deadline:
            pytest.fail(f"not within {DEADLINE:g} s: {what}")
        time.sleep(0.05)


def start_forge(llm_server: OpenAIServer, workspace: Path, steer: Path) -> subprocess.Popen[str]:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": WAITING_COMMAND})]),
        Text("switched to v2"),
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "forge",
            "run",
            "--yes",
            "--output",
            "jsonl",
            "--steer-file",
            str(steer),
            "call the API",
        ],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_steered(llm_server: OpenAIServer, process: subprocess.Popen[str]) -> None:
    stdout, stderr = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, stderr
    assert len(llm_server.requests) == 2
    sent = llm_server.requests[1].messages
    assert_valid_request(sent)
    assert sent[-2]["role"] == "tool" and "called v1" in str(sent[-2]["content"])
    assert sent[-1] == {"role": "user", "content": STEER}
    records = [json.loads(line) for line in stdout.splitlines()]
    steered = [record for record in records if record["type"] == "steering_added"]
    assert [record["text"] for record in steered] == [STEER]
    kinds = [record["type"] for record in records]
    assert kinds.index("steering_added") < kinds.index("turn_finished")


def test_a_line_written_to_a_fifo_steers_the_running_turn(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "steer.fifo"
    os.mkfifo(fifo)
    process = start_forge(llm_server, workspace, fifo)
    try:
        wait_until(lambda: len(llm_server.requests) >= 1, "the first request")
        with fifo.open("w") as writer:  # waits for forge's reader to open it
            writer.write(STEER + "\n")
        (workspace / "go").touch()
        check_steered(llm_server, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_line_appended_to_a_file_steers_the_running_turn(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    steer = tmp_path / "steer.txt"
    steer.write_text("")
    process = start_forge(llm_server, workspace, steer)
    try:
        wait_until(lambda: len(llm_server.requests) >= 1, "the first request")
        with steer.open("a") as writer:
            writer.write(STEER + "\n")
        (workspace / "go").touch()
        check_steered(llm_server, process)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def test_a_missing_steer_file_is_a_usage_error(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "forge", "run", "--steer-file", str(tmp_path / "none"), "x"],
        cwd=workspace,
        env=environment(llm_server),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 2 and "--steer-file" in done.stderr
