"""/sessions searches what was said (issue 42): typing a word of an answer keeps the session
that holds it and shows the line under it, at 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from forge.tui.screens.sessions import SessionsScreen
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until


async def test_typing_a_word_of_an_answer_finds_the_session_with_its_line(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("The capybara\nbathes in hot springs"), Text("nothing here"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "tell me about animals")
        await wait_idle(pilot)
        wanted = app.session.session_id
        await submit(pilot, "/clear")
        await submit(pilot, "something else")
        await wait_idle(pilot)
        await submit(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, SessionsScreen)
        assert len(picker.rows) == 2
        await pilot.press(*"hot SPRINGS")
        await wait_until(pilot, lambda: len(picker.rows) == 1, "the search")
        assert picker.rows[0].info.id == wanted
        shown = str(picker.query_one(OptionList).get_option_at_index(0).prompt)
        assert "“bathes in hot springs”" in shown  # the line that holds it, not the answer
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.session_id == wanted, "the resume")
