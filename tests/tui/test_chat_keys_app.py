"""Keys a daily user reaches for, in the real app at 80x24 (issue 35): PageUp and PageDown
typed in the prompt scroll the chat (and /help lists them); F3 hides the status pane, giving
the chat its columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.screens.help import help_markdown
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, submit, wait_until

SIZE = (80, 24)


async def test_page_up_and_down_from_the_prompt_scroll_the_chat(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        for number in range(12):
            await app.chat.add_notice(f"line {number}\n\nmore text\n\nand more")
        app.chat.follow_newest()
        await pilot.pause()
        bottom = app.chat.scroll_y
        assert bottom > 0
        app.prompt.focus()
        await pilot.press("pageup")
        await wait_until(pilot, lambda: app.chat.scroll_y < bottom, "the chat to scroll up")
        assert app.focused is app.prompt
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: app.chat.scroll_y == bottom, "the chat to scroll down")
    assert "PageUp / PageDown" in help_markdown()


async def test_f3_toggles_the_status_pane(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/help")
        await pilot.press("escape")
        width = app.chat.size.width
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.chat.size.width > width, "the chat to widen")
        assert not app.status.display
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.chat.size.width == width, "the pane to return")


async def test_help_keeps_the_skills_row_in_one_piece(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/help")
        await wait_until(pilot, lambda: app.screen.query("MarkdownTable"), "the help's tables")
        await pilot.pause()
        rows = [
            [cell.plain for cell in row]
            for table in app.screen.query("MarkdownTable")
            for row in getattr(table, "_rows")  # noqa: B009 (Textual keeps the cells private)
        ]
        skills = next(row for row in rows if row[0].startswith("/skills"))
        assert skills == [
            "/skills [list|enable|disable]",
            "Skills: list them; enable or disable one",
        ]
        assert all(len(row) == 2 for row in rows)
