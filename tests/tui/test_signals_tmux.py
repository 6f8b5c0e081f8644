"""The TUI in a real terminal (tmux) ended by SIGTERM or SIGHUP while a command runs: the
command's whole process group dies, Forge exits with 128 + the signal's number and the session
file is valid. Skipped only when tmux is not installed (.ci/run installs it)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.context.conversation import CANCELLED_RESULT
from tests.agent.test_exit_signals import COMMAND, live_members, wait_until
from tests.headless.test_headless_sessions import session_messages
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_e2e_tmux import HEIGHT, REPOSITORY, WIDTH, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@pytest.fixture
def terminal() -> Iterator[Tmux]:
    """A private tmux server, killed after the test."""
    tmux = Tmux(f"forge-signals-{os.getpid()}-{time.monotonic_ns()}", "forge")
    yield tmux
    subprocess.run(["tmux", "-L", tmux.socket_name, "kill-server"], capture_output=True)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_tui_and_its_command(
    llm_server: OpenAIServer,
    terminal: Tmux,
    workspace: Path,
    isolated_environment: Path,
    number: signal.Signals,
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": f"echo $PPID > forge.txt; {COMMAND}"})])
    )
    tmux = terminal
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
        "FORGE_TOOLS__AUTO_APPROVE": '["execute_command"]',
        # Unconfined: the test reads the command's process group from the host, which a PID
        # namespace hides (the sandbox's own ending of commands: tests/agent/sandbox/).
        "FORGE_TOOLS__SANDBOX__MODE": "off",
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
    tmux.wait_for("Type a task and press Enter")
    tmux.type_and_send("run it", "run it")

    group_file, forge_file = workspace / "group.txt", workspace / "forge.txt"
    wait_until(
        lambda: (
            group_file.exists()
            and group_file.read_text().strip() != ""
            and len(live_members(int(group_file.read_text()))) >= 4
        ),
        "the command's four processes started",
    )
    group, forge_pid = int(group_file.read_text()), int(forge_file.read_text())
    try:
        os.kill(forge_pid, number)
        wait_until(
            lambda: status_file.exists() and status_file.read_text().strip() != "",
            f"forge exited after {number.name}",
        )
        assert status_file.read_text().strip() == str(128 + number)
        wait_until(lambda: not live_members(group), "every process of the group ended")
    finally:
        for pid in live_members(group):
            os.kill(pid, signal.SIGKILL)
    sessions = list((isolated_environment / "data" / "forge" / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1
    messages = session_messages(sessions[0].stem)
    assert ("user", "run it") in messages
    assert messages[-1] == ("tool", CANCELLED_RESULT), messages[1:]
    # The terminal is given back.
    deadline = time.monotonic() + 30
    while tmux.pane_value("alternate_on") != "0" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tmux.pane_value("alternate_on") == "0"


def process_ended(pid: int) -> bool:
    """Gone, or a zombie nobody has reaped yet (its parent, the tmux server, is gone too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].split()[0] in ("Z", "X")


def test_closing_the_terminal_while_an_answer_streams_ends_forge(
    llm_server: OpenAIServer, terminal: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    # A closed window: the pty goes away (SIGHUP) while output is being drawn. Textual's
    # output thread then dies on a failed write and its queue fills: without the forced exit
    # Forge hung there for good.
    llm_server.enqueue(Text("streaming on and on, " * 2000, chunk_size=4, chunk_delay=0.002))
    tmux = terminal
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), f"exec {sys.executable} -m forge --workspace {workspace}",
    )  # fmt: skip
    pid = int(tmux.pane_value("pane_pid"))
    tmux.wait_for("Type a task and press Enter")
    tmux.type_and_send("talk", "talk")
    tmux.wait_for("streaming on and on")
    subprocess.run(["tmux", "-L", tmux.socket_name, "kill-server"], capture_output=True)
    try:
        wait_until(lambda: process_ended(pid), "forge ended with its terminal")
    finally:
        if not process_ended(pid):
            os.kill(pid, signal.SIGKILL)
