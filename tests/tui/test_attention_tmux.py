"""The bell and the desktop notice in a real terminal at 80x24 (issue 35): the bytes Forge
writes to its pane are recorded with `tmux pipe-pane`. A turn's end and an approval ring the
bell; with `ui.notify: desktop` an OSC 9 notice follows only once the terminal has reported
that it lost focus (a focus-out report sent to the pane); `ui.notify: off` writes neither.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import send_bytes, start_forge, wait_for_file_text

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test


def record_output(tmux: Tmux, path: Path) -> None:
    tmux.run("pipe-pane", "-O", "-t", tmux.session, f"cat >> {path}")


def test_turn_end_rings_the_bell_and_a_blurred_terminal_gets_a_desktop_notice(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Text("First answer."))
    llm_server.enqueue(Text("Second answer.", chunk_size=2, chunk_delay=0.3))
    written = workspace.parent / "pane-output"
    start_forge(tmux, llm_server, workspace, environment={"FORGE_UI__NOTIFY": "desktop"})
    record_output(tmux, written)
    tmux.type_and_send("first", "first")
    tmux.wait_for("First answer.")
    wait_for_file_text(written, "\a")
    # Focus never reported: the bell alone.
    assert "\x1b]9;" not in written.read_text(errors="replace")

    tmux.type_and_send("second", "second")
    send_bytes(tmux, "\x1b[O")  # the terminal lost focus while the answer streams (a key
    # typed afterwards would tell Forge it has the focus again)
    tmux.wait_for("Second answer.")
    held = wait_for_file_text(written, "\x1b]9;Forge: The turn ended (completed)\x1b\\")
    assert held.count("\a") >= 2


def test_an_approval_rings_the_bell(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": "echo hi"})]))
    written = workspace.parent / "pane-output"
    start_forge(tmux, llm_server, workspace)
    record_output(tmux, written)
    tmux.type_and_send("run it", "run it")
    tmux.wait_for("echo hi")
    wait_for_file_text(written, "\a")


def test_notify_off_in_yaml_writes_no_bell(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    config = isolated_environment / "config" / "forge" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("ui:\n  notify: off\n", encoding="utf-8")  # YAML reads `off` as false
    llm_server.enqueue(Text("Quiet answer.", chunk_size=2, chunk_delay=0.2))
    llm_server.enqueue(Text("Done."))
    written = workspace.parent / "pane-output"
    start_forge(tmux, llm_server, workspace)
    record_output(tmux, written)
    tmux.type_and_send("hush", "hush")
    send_bytes(tmux, "\x1b[O")
    tmux.wait_for("Quiet answer.")
    time.sleep(1.0)  # what would have been written with the answer has reached the file
    held = written.read_text(errors="replace")
    assert held and "\a" not in held and "\x1b]9;" not in held
