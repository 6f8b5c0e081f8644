"""`forge run` in a real terminal at 80x24 (issue 35): text mode shows the answer once (on
stdout; stderr's progress lines leave the answer tool out) and rings the bell when the run
ends; `ui.notify: off` keeps it quiet.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.support.openai_server import Call, OpenAIServer, ToolCalls
from tests.tui.test_e2e_tmux import REPOSITORY, Tmux, pytestmark, tmux
from tests.tui.ux_tmux import HEIGHT, WIDTH, wait_for_file_text

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test

ANSWER = "The answer is FORTYTWOXYZ."


def run_in_tmux(
    tmux: Tmux, llm_server: OpenAIServer, workspace: Path, written: Path, notify: str
) -> str:
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        "FORGE_UI__NOTIFY": notify,
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    done = workspace.parent / "run-done"
    command = (
        f"sleep 0.5; {sys.executable} -m forge run --workspace {workspace} 'what is it'; "
        f"echo $? > {done}"
    )
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    tmux.run("set-option", "-t", tmux.session, "remain-on-exit", "on")
    tmux.run("pipe-pane", "-O", "-t", tmux.session, f"cat >> {written}")
    wait_for_file_text(done, "0")
    time.sleep(0.5)
    return tmux.capture()


def test_forge_run_on_a_terminal_shows_the_answer_once_and_rings(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": ANSWER})]))
    written = workspace.parent / "pane-output"
    screen = run_in_tmux(tmux, llm_server, workspace, written, "bell")
    held = written.read_text(errors="replace")
    assert screen.count("FORTYTWOXYZ") == 1 and held.count("FORTYTWOXYZ") == 1, held
    assert "✔ completed" in held
    assert "\a" in held


def test_forge_run_with_notify_off_does_not_ring(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": ANSWER})]))
    written = workspace.parent / "pane-output"
    screen = run_in_tmux(tmux, llm_server, workspace, written, "off")
    assert "FORTYTWOXYZ" in screen
    assert "\a" not in written.read_text(errors="replace")
