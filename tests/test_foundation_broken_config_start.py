"""A malformed config file never stops Forge: the full-screen app starts on defaults in a real
terminal (a detached tmux session), works, quits cleanly, and the file is left byte for byte.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, Text

REPOSITORY = Path(__file__).resolve().parent.parent
DEADLINE_SECONDS = 60.0
"""Generous: a cold start imports Textual and the tokenizer data in a fresh interpreter."""
BROKEN_CONFIG = b"llm:\n  model: model-from-the-broken-file\ncontext: [unclosed\n"

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A private tmux server (its own socket) with one 120x40 session."""

    def __init__(self, socket_name: str) -> None:
        self.socket_name = socket_name
        self.session = "forge"

    def tmux(self, *arguments: str) -> str:
        environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        completed = subprocess.run(
            ["tmux", "-L", self.socket_name, *arguments],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env=environment,
        )
        return completed.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, text: str) -> str:
        end = time.monotonic() + DEADLINE_SECONDS
        screen = ""
        while time.monotonic() < end:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; last screen:\n{screen}")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", self.session, "-l", text)
        self.tmux("send-keys", "-t", self.session, "Enter")


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    instance = Terminal(f"forge-foundation-{os.getpid()}-{time.monotonic_ns()}")
    yield instance
    subprocess.run(["tmux", "-L", instance.socket_name, "kill-server"], capture_output=True)


def test_forge_starts_on_defaults_with_a_malformed_config_and_leaves_it_alone(
    llm_server: OpenAIServer, terminal: Terminal, workspace: Path, isolated_environment: Path
) -> None:
    config_file = isolated_environment / "config" / "forge" / "config.yaml"
    config_file.parent.mkdir(parents=True)
    config_file.write_bytes(BROKEN_CONFIG)
    before = (config_file.read_bytes(), config_file.stat().st_mtime_ns)
    llm_server.enqueue(Text("Still working on defaults."))
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-foundation-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    status_file = workspace.parent / "forge-exit-status"
    command = f"{sys.executable} -m forge --workspace {workspace}; echo $? > {status_file}"
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    terminal.tmux(
        "new-session", "-d", "-s", terminal.session, "-x", "120", "-y", "40",
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    terminal.tmux("set-option", "-t", terminal.session, "remain-on-exit", "on")

    screen = terminal.wait_for("Type a task and press Enter")
    assert "gpt-4o-mini" in screen, "the default model, not the broken file's"
    assert "model-from-the-broken-file" not in screen
    terminal.type("are you there?")
    terminal.wait_for("Still working on defaults.")
    assert llm_server.requests[0].model == "gpt-4o-mini"

    terminal.type("/quit")
    end = time.monotonic() + DEADLINE_SECONDS
    while not status_file.exists() or not status_file.read_text().strip():
        if time.monotonic() >= end:
            pytest.fail(f"forge did not exit; screen:\n{terminal.screen()}")
        time.sleep(0.2)
    assert status_file.read_text().strip() == "0"
    assert (config_file.read_bytes(), config_file.stat().st_mtime_ns) == before
