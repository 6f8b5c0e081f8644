"""A resumed session holding a huge message is summarized without holding the event loop:
`--timeout`, SIGTERM, SIGINT and SIGHUP end `forge run` promptly (issue 20, docs/adr/0036).
Before, chunking a 2 MB message spun at 100 % CPU on the loop for minutes and all were ignored.

Real `forge run` subprocesses against the loopback server; the waits are hang guards, not
timing assertions."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forge.agent.exit_signals import exit_code_for
from forge.agent.history.session_file import SessionStore
from tests.agent.test_exit_signals import SIGNALLABLE_FORGE
from tests.headless.test_headless_sessions import environment, forge
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text

HANG_GUARD = 60.0
"""Seconds before a run that has not ended counts as hung (the bug: 28 minutes)."""
HUGE_CHARACTERS = 6_000_000
TIMEOUT_ARGS = ("--timeout", "3", "--output", "jsonl")


def session_with_a_huge_message(server: OpenAIServer, workspace: Path) -> None:
    """A finished session whose last exchange is a 6 MB user message with no boundary at all
    (the worst case for chunking: character cuts only) and a short answer."""
    server.enqueue(Text("first answer"))
    made = forge(server, workspace, "run", "--output", "jsonl", "hi")
    assert made.returncode == 0, made.stderr
    (path,) = SessionStore().directory.glob("*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    template = next(r for r in reversed(records) if r["type"] == "message")
    with path.open("a", encoding="utf-8") as handle:
        for role, content in (("user", "x" * HUGE_CHARACTERS), ("assistant", "noted")):
            message = dict(template["message"], role=role, content=content, tool_calls=[])
            message["id"] = f"{role}-huge"
            handle.write(json.dumps({"type": "message", "message": message}) + "\n")


def slow_summaries(request: RecordedRequest) -> Text:
    """Every answer takes long: a run that ends early was interrupted, not finished."""
    return Text("SUMMARY: noted.", delay=30.0)


def test_timeout_ends_a_run_summarizing_a_huge_message(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session_with_a_huge_message(llm_server, workspace)
    llm_server.responder = slow_summaries
    try:
        result = subprocess.run(
            [sys.executable, "-m", "forge", "--continue", "run", *TIMEOUT_ARGS, "go on"],
            cwd=workspace,
            env=environment(llm_server),
            capture_output=True,
            text=True,
            timeout=HANG_GUARD,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"forge run --timeout 3 still running after {HANG_GUARD:g} s")
    assert result.returncode == 5, result.stderr  # the timeout's exit code (ADR 0015)
    assert json.loads(result.stdout.splitlines()[-1])["subtype"] == "error_timeout"


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_ends_a_run_summarizing_a_huge_message(
    llm_server: OpenAIServer, workspace: Path, number: signal.Signals
) -> None:
    session_with_a_huge_message(llm_server, workspace)
    llm_server.responder = slow_summaries
    process = subprocess.Popen(
        [sys.executable, "-c", SIGNALLABLE_FORGE, "--continue", "run", "--output", "jsonl", "go"],
        cwd=workspace,
        env=environment(llm_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + HANG_GUARD
        for line in process.stdout:  # the summary has begun: the context is over budget
            if json.loads(line)["type"] in ("context_warning", "summarization_started"):
                break
            assert time.monotonic() < deadline, "no summary started"
        process.send_signal(number)
        try:
            _, stderr = process.communicate(timeout=HANG_GUARD)
        except subprocess.TimeoutExpired:
            pytest.fail(f"forge run still running {HANG_GUARD:g} s after {number.name}")
        assert process.returncode == exit_code_for(number), stderr
        assert f"interrupted ({number.name})" in stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
