"""Hostile text through the real app: control sequences from the model, tools, `!` output,
files, errors and resumed history never reach the terminal, and text that looks like
Textual markup is shown as typed, never parsed (issue 20)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle

SIZE = (120, 40)
HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b]2;owned\x1b\\"
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[2J\x1b[H\x1b[5A\x1bP+q544e\x1b\\\x07\x9b2J\x9d0;c1\x9c"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def screen_controls(app: App[object]) -> list[str]:
    """Control characters in the text of what the screen shows now (Textual adds its own
    sequences only after this point, from styles)."""
    found: list[str] = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            found.extend(_CONTROL.findall(segment.text))
    return found


async def test_model_text_and_command_output_reach_the_screen_inert(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "hostile.txt").write_text(f"file says {HOSTILE}\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "cat hostile.txt"})]),
        Text(f"Here it is: {HOSTILE} done", chunk_size=3),
    )
    store = configure(llm_server, monkeypatch, config={"tools": {"mode": "auto"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "show me")
        await wait_idle(pilot)
        await pilot.pause()
        assert screen_controls(app) == []
