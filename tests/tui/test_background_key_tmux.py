"""Background commands through a real terminal at 80x24 (issue 40): while the model's command
runs the footer offers `alt+d bg`; Alt+D moves the command to the background (the model's
next request reads that it did); `/tasks` lists it; quitting ends it and prints which
(docs/adr/0057).

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test

SERVER = "echo serving on 8000; sleep 1000"


def footer(screen: str) -> str:
    return [line for line in screen.splitlines() if line.strip()][-1]


def test_alt_d_moves_the_running_command_to_the_background(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": SERVER})]),
        Text("the server runs in the background"),
    )
    start_forge(
        tmux, llm_server, workspace, environment={"FORGE_TOOLS__MODE": "auto"}, after="true"
    )
    tmux.type_and_send("start the server", "start the server")
    tmux.wait_for("· running")  # the command runs
    tmux.wait_for(lambda screen: "alt+d bg" in footer(screen))  # offered at 80 columns
    tmux.run("send-keys", "-t", tmux.session, "M-d")
    tmux.wait_for("the server runs in the background")
    moved = str(llm_server.requests[1].messages[-1]["content"])
    assert "moved to the background by the user as bg1" in moved

    tmux.type_and_send("/tasks", "/tasks")
    tasks = tmux.wait_for("bg1  running")
    assert "serving on 8000" in tasks
    tmux.run("send-keys", "-t", tmux.session, "Escape")
    tmux.run("send-keys", "-t", tmux.session, "C-c")
    tmux.run("send-keys", "-t", tmux.session, "C-c")
    tmux.wait_for(f"ended background command bg1 `{SERVER}` (exit)")
