"""Leaving Forge prints the session's ID and how to resume it, in a real terminal at 80x24
(issue 35); the printed command reopens that session.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test


def test_exit_prints_the_session_id_and_the_resume_command(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Text("Noted."))
    start_forge(tmux, llm_server, workspace)
    tmux.type_and_send("remember this", "remember this")
    tmux.wait_for("Noted.")
    tmux.type_and_send("/quit", "Exit Forge")
    screen = tmux.wait_for("Resume it with: forge --resume ")
    found = re.search(r"Session (\S+)\nResume it with: forge --resume (\S+)", screen)
    assert found is not None and found.group(1) == found.group(2)
    sessions = list((isolated_environment / "data").rglob(f"*{found.group(1)}*"))
    assert sessions, "the ID names a saved session"
