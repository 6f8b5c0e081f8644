"""A long code line in an answer wraps at 80x24 instead of being cut at the chat's edge
(issue 35): its last word is on the screen.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test

LONG_LINE = "result = compute(" + ", ".join(f"argument_{n}" for n in range(12)) + ") # TAILEND"


def test_a_long_code_line_wraps_and_its_end_is_shown(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Text(f"Here:\n\n```python\n{LONG_LINE}\n```\n\nDone here."))
    start_forge(tmux, llm_server, workspace)
    tmux.type_and_send("show code", "show code")
    screen = tmux.wait_for("Done here.")
    assert "TAILEND" in screen, screen
    assert "argument_0" in screen
