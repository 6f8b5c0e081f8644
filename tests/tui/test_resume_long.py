"""Resuming a long session is O(screen) (issue 18, item 3; docs/adr/0032): through the real
start-up path (`forge --continue`: the app loads its runtime after the first frame), the last
answer is mounted as the app mounts, with a screenful of rows, not the history; the rest
comes as the user scrolls up, within the chat's block bound; a folded tool row opens."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from bench.resume import ANSWER_MARK, write_long_session
from forge.config.paths import sessions_dir
from forge.tui.app import ForgeApp
from forge.tui.widgets.chat import MAX_CHAT_BLOCKS
from forge.tui.widgets.chat_blocks import AssistantBlock, ToolCallBlock
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, wait_until

ROUNDS = 400
SIZE = (120, 40)


def module_numbers(app: ForgeApp) -> list[int]:
    """The file numbers of the read_file rows mounted, top to bottom."""
    return [
        int(block.call.parsed_arguments()["path"].split("_")[1].split(".")[0])
        for block in app.chat.query(ToolCallBlock)
    ]


def more_rows_than(app: ForgeApp, count: int) -> bool:
    return len(module_numbers(app)) > count


async def test_a_long_session_opens_on_its_last_answer_and_loads_older_rows_on_scrolling_up(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    configure(llm_server, monkeypatch)
    write_long_session(sessions_dir(), workspace, "gpt-4o-mini", ROUNDS)
    app = ForgeApp(workspace=workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        # Before the session: the first frame already holds the last answer and a screenful.
        assert not app.session_ready.is_set()
        answers = list(app.chat.query(AssistantBlock))
        assert answers and ANSWER_MARK in answers[-1].answer_text
        first = module_numbers(app)
        assert first == list(range(ROUNDS - len(first), ROUNDS)), "the newest rows, in order"
        assert 20 <= len(first) <= 60, "a screenful, not the history"

        await wait_until(pilot, app.session_ready.is_set, "the session")
        await pilot.pause()
        assert module_numbers(app) == first, "the session's history matched what was shown"
        assert app.chat.older_rows, "older rows wait for a scroll up"

        for _ in range(MAX_CHAT_BLOCKS):
            if not app.chat.older_rows:
                break
            shown = len(module_numbers(app))
            await wait_until(pilot, lambda: app.chat.scroll_y > 2, "the place kept")
            app.chat.scroll_home(animate=False, immediate=True)
            await wait_until(pilot, partial(more_rows_than, app, shown), "earlier rows")
            numbers = module_numbers(app)
            assert numbers == list(range(ROUNDS - len(numbers), ROUNDS)), "in order, no gap"
        assert not app.chat.older_rows
        assert len(app.chat.children) <= MAX_CHAT_BLOCKS + 2, "the chat stays bounded"
        assert ANSWER_MARK in list(app.chat.query(AssistantBlock))[-1].answer_text


async def test_a_folded_row_of_a_resumed_session_opens_on_enter_with_its_output(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    configure(llm_server, monkeypatch)
    write_long_session(sessions_dir(), workspace, "gpt-4o-mini", 3)
    app = ForgeApp(workspace=workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        row = app.chat.query(ToolCallBlock).last()
        assert row.folded and row.status_text == "done"
        assert "read_file  src/module_2.py  · done" in str(row.render())
        row.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not row.folded and row.children, "the row to open")
        await pilot.pause()
        assert not row._box.collapsed
        assert "def function_2_40(value)" in row.output
