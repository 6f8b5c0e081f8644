"""Real MCP servers for the tests: `tests/mcp/servers/tool_server.py` run as a stdio
subprocess, or as a streamable-HTTP server on 127.0.0.1 (a real process, real HTTP)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.config.settings import McpServerSettings

SERVER_SCRIPT = Path(__file__).resolve().parent / "servers" / "tool_server.py"


def stdio_settings(**changes: object) -> McpServerSettings:
    """A stdio entry that runs the test server with this Python."""
    entry: dict[str, object] = {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"]}
    entry.update(changes)
    return McpServerSettings.model_validate(entry)


def started_pids(log: Path) -> list[int]:
    """The pids the test server wrote to its start log, one per start."""
    if not log.exists():
        return []
    return [int(line) for line in log.read_text().split()]


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The test server over streamable HTTP; yields its URL."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "http-server.log").open("w"),
        env={**os.environ, "FORGE_TEST_START_LOG": str(tmp_path / "http-starts.log")},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP HTTP test server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
