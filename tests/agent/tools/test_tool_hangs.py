"""Nothing a tool meets can hang Forge: catastrophic regular expressions run in linear time
(RE2), FIFOs and devices are refused without blocking, and a stuck worker thread never keeps
the process alive after its turn ended. Each test waits with a generous deadline and fails if
it passes; none measures time."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest

from forge.agent.tools.base import ToolResult
from forge.agent.tools.threads import run_in_daemon_thread
from tests.agent.tools.support import call_tool

DEADLINE = 60.0
"""Generous: the protected calls return at once; the unprotected ones never return."""
REPOSITORY = Path(__file__).resolve().parents[3]
T = TypeVar("T")


async def within_deadline(call: Awaitable[T]) -> T:
    try:
        return await asyncio.wait_for(call, DEADLINE)
    except TimeoutError:
        pytest.fail(f"the call did not return within {DEADLINE:g} s: it hangs")


async def test_a_catastrophic_pattern_returns(workspace: Path) -> None:
    # Python's backtracking `re` needs ~2**40 steps for this line; RE2 needs one pass.
    (workspace / "input.txt").write_text("a" * 40 + "!\n" + "a" * 12 + "\n")
    result: ToolResult = await within_deadline(
        call_tool("search_files", workspace, regex=r"^(a+)+$")
    )
    assert not result.is_error
    assert result.content == "input.txt:2: aaaaaaaaaaaa"


async def test_patterns_re2_cannot_run_are_clear_errors(workspace: Path) -> None:
    (workspace / "a.txt").write_text("abab\n")
    result = await call_tool("search_files", workspace, regex=r"(ab)\1")
    assert result.is_error
    assert result.content.startswith(r"invalid regex '(ab)\\1':")
    assert "no backreferences or look-around" in result.content


async def test_reading_a_fifo_is_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await within_deadline(call_tool("read_file", workspace, path="pipe"))
    assert result.is_error
    assert result.content == "'pipe' is a FIFO (named pipe); file tools only work on regular files"


async def test_apply_diff_on_a_fifo_is_refused_without_blocking(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    result = await within_deadline(
        call_tool("apply_diff", workspace, path="pipe", blocks=[{"search": "a", "replace": "b"}])
    )
    assert result.is_error and "FIFO" in result.content


async def test_search_skips_fifos_and_refuses_one_named_directly(workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    (workspace / "real.txt").write_text("needle\n")
    whole = await within_deadline(call_tool("search_files", workspace, regex="needle"))
    assert whole.content == "real.txt:1: needle"
    direct = await within_deadline(
        call_tool("search_files", workspace, regex="needle", path="pipe")
    )
    assert direct.is_error and "FIFO" in direct.content


async def test_a_socket_is_refused(workspace: Path) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(workspace / "server.sock"))
        for name, arguments in (
            ("read_file", {"path": "server.sock"}),
            ("write_file", {"path": "server.sock", "content": "x"}),
        ):
            result = await within_deadline(call_tool(name, workspace, **arguments))
            assert result.is_error and "is a socket" in result.content, name
    finally:
        listener.close()


STUCK_THREAD_PROGRAM = """
import asyncio, os, sys
from forge.agent.tools.threads import run_in_daemon_thread

def read_fifo(path):
    with open(path, "rb") as handle:  # no writer ever comes: blocks forever
        return handle.read()

async def main():
    try:
        await asyncio.wait_for(run_in_daemon_thread(read_fifo, sys.argv[1]), 0.2)
    except TimeoutError:
        print("turn ended", flush=True)

asyncio.run(main())
"""


def test_a_stuck_tool_thread_does_not_keep_the_process_alive(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    try:
        finished = subprocess.run(
            [sys.executable, "-c", STUCK_THREAD_PROGRAM, str(fifo)],
            env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the process never exited: a worker thread kept it alive")
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout == "turn ended\n"


async def test_cancelling_a_stuck_tool_thread_returns_at_once(tmp_path: Path) -> None:
    """Esc, Ctrl+C and --timeout cancel the await; the turn ends even though the thread is
    still blocked."""
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    task = asyncio.create_task(run_in_daemon_thread(fifo.read_bytes))
    await asyncio.sleep(0.05)  # let the thread block in open()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await within_deadline(task)
    # Release the thread: a writer opens and closes the FIFO, the read sees end of file.
    descriptor = os.open(fifo, os.O_WRONLY)
    os.close(descriptor)
