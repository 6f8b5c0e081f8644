"""The UI keeps drawing whatever a tool does: while the model's `search_files` runs a
catastrophic pattern over a large file, keystrokes still reach the prompt and the turn ends.
(With Python's backtracking `re` the search held the GIL for ever; RE2 runs in linear time,
ADR 0020.) The real app against the loopback server; every wait has a deadline."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message

from forge.agent.events import ToolCallFinished, ToolCallStarted
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    configure,
    events_of,
    make_app,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


async def test_keystrokes_are_drawn_while_a_catastrophic_search_runs(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # ~2**28 backtracking steps per line for `re`: minutes with the GIL held, so a regression
    # fails at the deadline instead of hanging the test run; RE2 takes microseconds.
    (workspace / "input.txt").write_text(("a" * 28 + "!\n") * 6)
    llm_server.enqueue(
        ToolCalls([Call("search_files", {"regex": r"^(a+)+$"})]), Text("no such line")
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "find it")
        await wait_until(pilot, lambda: events_of(seen, ToolCallStarted), "the search to start")
        await pilot.press(*"still typing")
        await wait_until(pilot, lambda: app.prompt.text == "still typing", "the typed text")
        await wait_idle(pilot, "the search turn to end")
        finished = events_of(seen, ToolCallFinished)
        assert [event.result for event in finished] == [r"no matches for /^(a+)+$/ in ."]
