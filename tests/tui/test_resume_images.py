"""A reopened session shows images as they were shown (docs/adr/0055, part 2): an `@shot.png`
attachment row with its name and size, and a `read_file` of an image as its tool row, live and
after `--continue`, at 80 by 24 cells; `/rewind` offers only what the user typed (the tool's
image is never a user turn)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until
from tests.tui.test_resume_fidelity import chat_rows

SIZE = (80, 24)


async def test_image_rows_read_the_same_live_and_resumed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    Image.new("RGB", (3000, 1000), (0, 0, 0)).save(workspace / "shot.png")
    Image.new("RGB", (50, 40), (9, 9, 9)).save(workspace / "icon.png")
    llm_server.enqueue(
        Text("A black band."),
        ToolCalls([Call("read_file", {"path": "icon.png"})]),
        Text("A tiny square."),
    )
    config = {"llm": {"model": "gpt-4o"}, "tools": {"auto_approve": ["read_file"]}}
    store = configure(llm_server, monkeypatch, config=config)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "what is @shot.png?")
        await wait_idle(pilot)
        await submit(pilot, "and icon.png?")
        await wait_idle(pilot)
        live = chat_rows(app)
        live_turns = [point.text for point in app.session.history.rewind_points()]

    attached = [line for line in live if line.startswith("notice[attachment]")]
    assert len(attached) == 1
    assert attached[0].startswith(
        "notice[attachment]: attached shot.png (image 2048x683 px, scaled from 3000x1000, "
    )
    assert any(line.startswith("tool: read_file ok") for line in live)
    assert live_turns == ["what is @shot.png?", "and icon.png?"]

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        while resumed.chat.older_rows:
            await resumed.chat.load_older_rows()
        await pilot.pause()
        shown = chat_rows(resumed)
        resumed_turns = [point.text for point in resumed.session.history.rewind_points()]
    assert shown == live
    assert resumed_turns == live_turns
