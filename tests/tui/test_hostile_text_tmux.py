"""Hostile text through a real terminal (issue 20): `forge` runs in tmux with clipboard
capture on (`set-clipboard on`, so an OSC 52 would fill a paste buffer); the model's answer,
an `execute_command` result and a `!` command print OSC 52, OSC 0/2, OSC 8, a clear screen,
cursor moves, DCS, BEL and C1 controls. Nothing reaches the terminal: no paste buffer, the
pane title unchanged, the layout intact, the sequences shown as visible text.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_e2e_tmux import DEADLINE_SECONDS, HEIGHT, REPOSITORY, WIDTH, Tmux, tmux

__all__ = ["tmux"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned-title\x07\x1b]2;owned-title\x1b\\"
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[2J\x1b[H\x1b[5A\x1b[10;10HDRAWN\x1bP+q544e\x1b\\\x07\x9b2J\x9d0;owned-c1\x9c"
)


def open_the_command_row(tmux: Tmux) -> None:
    """Open the model's command row (collapsed): Shift+Tab moves the focus back from the
    prompt to its title, Enter opens it. The focus may first land elsewhere while the turn
    settles, so step back again until the output shows."""
    for _ in range(6):
        tmux.run("send-keys", "-t", tmux.session, "BTab")
        tmux.run("send-keys", "-t", tmux.session, "Enter")
        end = time.monotonic() + 5
        while time.monotonic() < end:
            if "FILE-END" in tmux.capture():
                return
            time.sleep(0.2)
    raise AssertionError(f"the command row never opened; last screen:\n{tmux.capture()}")


def test_no_sequence_reaches_the_terminal_from_model_text_or_command_output(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path
) -> None:
    (workspace / "hostile.txt").write_text(f"FILE-START {HOSTILE} FILE-END\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "cat hostile.txt"})]),
        Text(f"ANSWER-START {HOSTILE} ANSWER-END", chunk_size=4, chunk_delay=0.005),
    )
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-hostile-test-key",
        "FORGE_TOOLS__MODE": "auto",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    # A server with clipboard capture on before Forge's pane exists.
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "holder", "sleep 600")
    tmux.run("set-option", "-g", "set-clipboard", "on")
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    status_file = workspace.parent / "forge-exit-status"
    command = f"{sys.executable} -m forge --workspace {workspace}; echo $? > {status_file}"
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    tmux.run("set-option", "-t", tmux.session, "remain-on-exit", "on")
    tmux.wait_for("Type a task and press Enter")
    title = tmux.pane_value("pane_title")

    tmux.type_and_send("show it", "show it")
    tmux.wait_for("ANSWER-END")
    open_the_command_row(tmux)
    tmux.run("send-keys", "-t", tmux.session, "Escape")
    tmux.type_and_send("!cat hostile.txt", "!cat hostile.txt")
    screen = tmux.wait_for(lambda shown: shown.count("FILE-END") == 2 and "[exit code 0]" in shown)

    assert tmux.run("list-buffers") == "", "an OSC 52 reached tmux's clipboard"
    assert tmux.pane_value("pane_title") == title
    assert "owned" not in tmux.pane_value("pane_title")
    # The layout is intact: the header on the first line, the status pane, the whole chat.
    assert screen.splitlines()[0].lstrip().startswith("forge"), screen
    assert "Context" in screen and "show it" in screen
    # Shown as text, inline (the chat wraps them): CSI sequences removed, so the cursor move
    # drew nothing at row 10 and "DRAWN" sits where it was written.
    assert "ANSWER-START" in screen and "ANSWER-END" in screen
    assert screen.count("FILE-START") == 2, "the execute_command and ! output"
    assert screen.count("␛]52;c;cHduZWQ=␇␛]0;owned-title␇") == 3
    assert screen.count("␛\\DRAWN␛P+q544e") == 3

    tmux.type_and_send("/quit", lambda shown: "Exit Forge" in shown)
    end = time.monotonic() + DEADLINE_SECONDS
    while not status_file.exists() or not status_file.read_text().strip():
        if time.monotonic() >= end:
            pytest.fail(f"forge did not exit; screen:\n{tmux.capture()}")
        time.sleep(0.2)
    assert status_file.read_text().strip() == "0"
    assert tmux.run("list-buffers") == ""
