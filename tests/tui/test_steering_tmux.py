"""Steering through a real terminal at 80x24 (issue 40): while the model's 5-second command
runs, the footer shows `steer`; a message typed then and sent with Alt+S (which reaches the
app through tmux) is in the very next request, after the command's result and before the
model's final answer, and the chat shows it (docs/adr/0057).

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.agent.test_exit_signals import assert_valid_request
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_e2e_tmux import DEADLINE_SECONDS, Tmux, pytestmark, tmux
from tests.tui.ux_tmux import start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test

STEER = "stop, use the v2 API"


def footer(screen: str) -> str:
    return [line for line in screen.splitlines() if line.strip()][-1]


def test_alt_s_steers_a_message_into_the_running_turn(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "sleep 5; echo called v1"})]),
        Text("switched to v2"),
    )
    start_forge(tmux, llm_server, workspace, environment={"FORGE_TOOLS__MODE": "auto"})
    assert "steer" not in footer(tmux.capture())  # no turn runs: the key is not offered
    tmux.type_and_send("call the API", "call the API")
    tmux.wait_for("sleep 5")  # the command runs
    tmux.wait_for(lambda screen: "steer" in footer(screen))  # offered in the footer at 80 cols
    tmux.run("send-keys", "-t", tmux.session, "-l", STEER)
    tmux.wait_for(STEER)
    tmux.run("send-keys", "-t", tmux.session, "M-s")
    tmux.wait_for("switched to v2")

    assert len(llm_server.requests) == 2
    sent = llm_server.requests[1].messages
    assert_valid_request(sent)
    assert sent[-2]["role"] == "tool" and "called v1" in str(sent[-2]["content"])
    assert sent[-1] == {"role": "user", "content": STEER}
    screen = tmux.capture()
    assert screen.index(STEER) < screen.index("switched to v2")  # shown where it was added
    deadline = time.monotonic() + DEADLINE_SECONDS
    while "steer" in footer(tmux.capture()):  # the turn is over: not offered
        if time.monotonic() > deadline:
            pytest.fail("the footer still offers steer after the turn")
        time.sleep(0.05)
