"""Copying in a real terminal at 80x24 (issue 35): a mouse selection and Ctrl+C put the text
on the clipboard through OSC 52 — tmux, with `set-clipboard on`, keeps it as a paste buffer —
and the press never counts towards quitting; `/copy` and `/copy N` copy the last answer and
its code blocks.

Skipped only when tmux is not installed (.ci/run installs it).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_e2e_tmux import Tmux, pytestmark, tmux
from tests.tui.ux_tmux import drag, start_forge

__all__ = ["pytestmark", "tmux"]  # the skip marker and the fixture, shared with the e2e test

ANSWER = (
    "The magic word is PLUGHXYZZY today.\n\n"
    "```python\nprint('first block')\n```\n\n"
    "```sh\necho second-block\nls -la\n```\n"
)


def buffer(tmux: Tmux) -> str:
    return tmux.run("show-buffer")


def test_a_selection_is_copied_with_ctrl_c_and_the_last_answer_with_copy(
    llm_server: OpenAIServer, tmux: Tmux, workspace: Path, isolated_environment: Path
) -> None:
    llm_server.enqueue(Text(ANSWER))
    start_forge(tmux, llm_server, workspace)
    tmux.run("set-option", "-s", "set-clipboard", "on")
    tmux.type_and_send("tell me the word", "tell me the word")
    screen = tmux.wait_for("PLUGHXYZZY")

    row = next(number for number, line in enumerate(screen.splitlines()) if "PLUGH" in line)
    column = screen.splitlines()[row].index("PLUGH")
    drag(tmux, (column, row), (column + len("PLUGHXYZZY"), row))
    tmux.run("send-keys", "-t", tmux.session, "C-c")
    tmux.wait_for("Copied the selection")
    assert buffer(tmux).strip() == "PLUGHXYZZY"
    assert "again to quit" not in tmux.capture()

    # The copy did not count: one more Ctrl+C asks again instead of quitting.
    tmux.run("send-keys", "-t", tmux.session, "C-c")
    tmux.wait_for("Press Ctrl+C again to quit")
    assert tmux.pane_value("pane_dead") == "0"

    tmux.type_and_send("/copy 2", "/copy 2")
    tmux.wait_for("Copied code block 2 of 2 (sh)")
    assert buffer(tmux) == "echo second-block\nls -la"

    tmux.type_and_send("/copy", "Copy the last answer, or")
    tmux.wait_for("Copied the last answer")
    assert buffer(tmux).startswith("The magic word is PLUGHXYZZY today.")
    assert "echo second-block" in buffer(tmux)
