"""End to end in a real terminal: `forge` runs in a detached tmux session against the loopback
server; keys are typed, the screen is captured until the streamed answer shows, /quit exits.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.openai_server import OpenAIServer, Text

REPOSITORY = Path(__file__).resolve().parents[2]
WIDTH, HEIGHT = 120, 40
DEADLINE_SECONDS = 60.0
"""Generous: a cold start imports Textual and tiktoken data in a fresh interpreter."""

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def _terminal_environment() -> dict[str, str]:
    """This process's environment minus COLUMNS/LINES: a test runner may have set them, and
    they would override the real terminal size inside tmux."""
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


class Tmux:
    """One private tmux server (its own socket) holding one session."""

    def __init__(self, socket_name: str, session: str) -> None:
        self.socket_name = socket_name
        self.session = session

    def run(self, *arguments: str) -> str:
        completed = subprocess.run(
            ["tmux", "-L", self.socket_name, *arguments],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env=_terminal_environment(),
        )
        return completed.stdout

    def capture(self) -> str:
        """The visible screen as text."""
        return self.run("capture-pane", "-p", "-t", self.session)

    def pane_value(self, variable: str) -> str:
        return self.run("display-message", "-p", "-t", self.session, f"#{{{variable}}}").strip()

    def wait_for(self, what: str | Callable[[str], bool]) -> str:
        """Capture the screen until it shows the text `what` (or `what(screen)` is true);
        fail with the last screen."""
        shown = (lambda screen: what in screen) if isinstance(what, str) else what
        end = time.monotonic() + DEADLINE_SECONDS
        screen = ""
        while time.monotonic() < end:
            screen = self.capture()
            if shown(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{what!r} never appeared; last screen:\n{screen}")

    def type_and_send(self, text: str, typed: str | Callable[[str], bool]) -> None:
        """Type `text`, wait until the screen shows it was typed (`typed`), then press Enter:
        an Enter that overtakes the text would send an empty prompt, and be lost."""
        self.run("send-keys", "-t", self.session, "-l", text)
        self.wait_for(typed)
        self.run("send-keys", "-t", self.session, "Enter")


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    terminal = Tmux(f"forge-e2e-{os.getpid()}-{time.monotonic_ns()}", "forge")
    yield terminal
    subprocess.run(["tmux", "-L", terminal.socket_name, "kill-server"], capture_output=True)


def test_forge_in_tmux_streams_an_answer_and_quits(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    answer = "Hello from the loopback model, streamed in pieces."
    llm_server.enqueue(Text(answer, chunk_size=6, chunk_delay=0.01))
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    status_file = workspace.parent / "forge-exit-status"
    command = f"{sys.executable} -m forge --workspace {workspace}; echo $? > {status_file}"
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    tmux.run("set-option", "-t", tmux.session, "remain-on-exit", "on")

    screen = tmux.wait_for("Type a task and press Enter")
    assert "gpt-4o-mini" in screen, "the header names the model"
    assert "Context" in screen and "Summarization" in screen, "the status pane is shown"

    tmux.type_and_send("say hello", "say hello")
    screen = tmux.wait_for(answer)
    assert "say hello" in screen
    assert "sk-e2e-test-key" not in screen
    assert llm_server.requests[0].messages[-1] == {"role": "user", "content": "say hello"}

    # Fully typed, the hints list /quit alone (while "/" alone lists every command).
    tmux.type_and_send("/quit", lambda shown: "Exit Forge" in shown and "/settings" not in shown)
    end = time.monotonic() + DEADLINE_SECONDS
    while not status_file.exists() or not status_file.read_text().strip():
        if time.monotonic() >= end:
            pytest.fail(f"forge did not exit; screen:\n{tmux.capture()}")
        time.sleep(0.2)
    assert status_file.read_text().strip() == "0"
    # The terminal is given back: out of the alternate screen, mouse reporting off.
    assert tmux.pane_value("alternate_on") == "0"
    assert tmux.pane_value("mouse_any_flag") == "0"
    assert "Summarization" not in tmux.capture()
