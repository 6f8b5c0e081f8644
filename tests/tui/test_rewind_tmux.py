"""/rewind's dialogs in a real 80x24 terminal (tmux), read as plain text: the choice of what
to restore is one dialog with one top border, not drawn over the turn list's frame.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_e2e_tmux import REPOSITORY, Tmux, pytestmark, tmux  # noqa: F401

WIDTH, HEIGHT = 80, 24
TOP_BORDER = "▀" * 20
"""A stretch of a dialog's thick top border as the terminal draws it."""


def _top_borders(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if TOP_BORDER in line]


def test_at_80x24_the_rewind_choice_has_one_top_border(
    llm_server: OpenAIServer,
    tmux: Tmux,  # noqa: F811
    workspace: Path,
    isolated_environment: Path,
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-rewind-test-key",
        "PYTHONPATH": str(REPOSITORY),
        "TERM": "xterm-256color",
        "HOME": os.environ["HOME"],
        **{name: os.environ[name] for name in os.environ if name.startswith("XDG_")},
    }
    settings = [f"-e{name}={value}" for name, value in environment.items()]
    command = f"{sys.executable} -m forge --workspace {workspace}"
    tmux.run(
        "new-session", "-d", "-s", tmux.session, "-x", str(WIDTH), "-y", str(HEIGHT),
        *settings, "-c", str(workspace), command,
    )  # fmt: skip
    tmux.wait_for("Type a task and press Enter")
    tmux.type_and_send("the first question", "the first question")
    tmux.wait_for("first answer")
    tmux.type_and_send("the second question", "the second question")
    tmux.wait_for("second answer")

    tmux.type_and_send("/rewind", "/rewind")
    tmux.wait_for("Rewind to before a turn")
    tmux.run("send-keys", "-t", tmux.session, "Enter")
    screen = tmux.wait_for("Both [b]")
    assert "Rewind to before:" in screen
    assert "Rewind to before a turn" not in screen, "the list is not drawn around the choice"
    borders = _top_borders(screen)
    assert len(borders) == 1, "\n".join(borders)
    tmux.run("send-keys", "-t", tmux.session, "Escape")
    screen = tmux.wait_for("Rewind to before a turn")  # Esc: back to the list, whole
    assert "2. the second question" in screen and len(_top_borders(screen)) == 1
