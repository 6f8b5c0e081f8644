"""Ctrl+G opens the prompt in the user's editor and takes back what was saved, in a real
terminal at 80x24 (issue 35): the "editor" is a script that records what it was given and
writes its own text; F3 hides and shows the status pane.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import OpenAIServer
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test


def test_ctrl_g_edits_the_prompt_in_the_editor(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    seen = workspace.parent / "editor-saw"
    editor = workspace.parent / "fake-editor"
    editor.write_text(
        f'#!/bin/sh\ncp "$1" {seen}\nprintf "%s\\nwritten in the editor\\n" "$(cat "$1")" > "$1"\n'
    )
    editor.chmod(0o755)
    start_forge(tmux, llm_server, workspace, environment={"VISUAL": str(editor)})
    tmux.run("send-keys", "-t", tmux.session, "-l", "a draft")
    tmux.wait_for("a draft")
    tmux.run("send-keys", "-t", tmux.session, "C-g")
    screen = tmux.wait_for("written in the editor")
    assert seen.read_text() == "a draft"
    assert "a draft" in screen
    assert "Ask Forge" not in screen  # the text is in the prompt, not sent
    assert llm_server.requests == []


def test_f3_hides_and_shows_the_status_pane(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    start_forge(tmux, llm_server, workspace)
    tmux.wait_for("Summarization")
    tmux.run("send-keys", "-t", tmux.session, "F3")
    screen = tmux.wait_for(lambda shown: "Summarization" not in shown)
    assert "Context" not in screen
    tmux.run("send-keys", "-t", tmux.session, "F3")
    tmux.wait_for("Summarization")
