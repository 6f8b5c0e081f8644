"""The permission-mode key reaches Forge through a real terminal: in tmux, Ctrl+T switches the
mode the status pane shows (Shift+Tab would only move focus; docs/adr/0029).

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.support.openai_server import OpenAIServer
from tests.tui.test_e2e_tmux import HEIGHT, REPOSITORY, WIDTH, Tmux, pytestmark, tmux

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test


def test_ctrl_t_in_tmux_cycles_the_permission_mode(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    environment = {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-e2e-test-key",
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
    screen = tmux.wait_for("mode   ask")
    assert "^t Mode" in screen, "the footer shows the key"
    tmux.run("send-keys", "-t", tmux.session, "C-t")
    tmux.wait_for("mode   accept-edits")
    tmux.run("send-keys", "-t", tmux.session, "C-t")
    tmux.wait_for("mode   auto")
    tmux.run("send-keys", "-t", tmux.session, "C-t")
    tmux.wait_for("mode   read-only")
