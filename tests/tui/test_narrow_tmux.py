"""`forge` in a real 80x24 terminal (tmux), read as plain text the way a user without colours
(or a screen capture) sees it: the prompt's hint is whole, the user's message carries the
thick bar, and Forge's error about a mention carries its own marker (ADR 0033).

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_e2e_tmux import REPOSITORY, Tmux, pytestmark, tmux  # noqa: F401

WIDTH, HEIGHT = 80, 24


def _line_with(screen: str, text: str) -> str:
    return next(line for line in screen.splitlines() if text in line)


def test_at_80x24_the_hint_is_whole_and_errors_are_not_marked_as_typed(
    llm_server: OpenAIServer,
    tmux: Tmux,  # noqa: F811
    workspace: Path,
    isolated_environment: Path,
) -> None:
    llm_server.enqueue(Text("There is no such file here."))
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-narrow-test-key",
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

    screen = tmux.wait_for("Type a task and press Enter")
    hint = _line_with(screen, "Ask Forge")
    assert "Ask Forge…  (Enter sends · / for commands)" in hint, hint

    tmux.type_and_send("explain @nonexist.py please", "@nonexist.py please")
    screen = tmux.wait_for("There is no such file here.")
    typed = _line_with(screen, "explain @nonexist.py please")
    error = _line_with(screen, "not attached")
    assert typed.lstrip().startswith("█"), typed
    assert error.lstrip().startswith("┃"), error
    assert "█" not in error
