"""/sessions is a picker at 80x24 (issue 35): the workspace's sessions newest first with
their full IDs, typing filters by title or ID, Up/Down choose, Enter resumes; a subagent's
sessions are folded under their parent until Tab shows them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from forge.agent.history.session_file import SessionInfo
from forge.tui.screens.sessions import SessionsScreen, picker_rows
from forge.tui.widgets.chat_blocks import UserMessageBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

SIZE = (80, 24)


async def test_typing_filters_and_enter_resumes_the_chosen_session(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("a1"), Text("b1"), Text("c1"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        ids = []
        for question in ("alpha question", "beta question", "gamma question"):
            await submit(pilot, question)
            await wait_idle(pilot)
            ids.append(app.session.session_id)
            if question != "gamma question":
                await submit(pilot, "/clear")
        await submit(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, SessionsScreen)
        assert [row.info.id for row in picker.rows] == ids[::-1]  # newest first
        listing = picker.query_one(OptionList)
        shown = [str(listing.get_option_at_index(i).prompt) for i in range(3)]
        assert all(session_id in text for session_id, text in zip(ids[::-1], shown, strict=True))

        await pilot.press("down", "down", "up")
        assert picker.highlighted_row() is not None
        assert picker.highlighted_row().info.id == ids[1]  # type: ignore[union-attr]

        await pilot.press(*"ALPHA")
        await wait_until(pilot, lambda: len(picker.rows) == 1, "the filter")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.session_id == ids[0], "the resume")
        await pilot.pause()
        users = [block.text for block in app.chat.query(UserMessageBlock)]
        assert users == ["alpha question"]

        await submit(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the picker")
        await pilot.press(*ids[2][-6:])  # the end of an ID finds it too
        await wait_until(pilot, lambda: len(app.screen.rows) == 1, "the ID filter")  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert app.session.session_id == ids[0]


def info(session_id: str, updated: float, parent: str = "", agent: str = "") -> SessionInfo:
    return SessionInfo(
        session_id, Path("x"), "w", 0.0, updated, "m", 3, f"title {session_id}",
        parent=parent, agent=agent,
    )  # fmt: skip


SESSIONS = [
    info("20261128-120000-child2", 5, parent="20261128-110000-parent", agent="reviewer"),
    info("20261128-115000-child1", 4, parent="20261128-110000-parent", agent="explore"),
    info("20261128-113000-other0", 3),
    info("20261128-110000-parent", 2),
]


def test_children_are_folded_under_their_parent_until_shown() -> None:
    rows = picker_rows(SESSIONS, "", set())
    assert [row.info.id for row in rows] == ["20261128-113000-other0", "20261128-110000-parent"]
    assert rows[1].children == 2 and not rows[1].expanded
    rows = picker_rows(SESSIONS, "", {"20261128-110000-parent"})
    assert [row.info.agent for row in rows if row.child] == ["explore", "reviewer"]
    # A query that finds a child shows it under its parent.
    rows = picker_rows(SESSIONS, "child2", set())
    assert [row.info.id for row in rows] == ["20261128-110000-parent", "20261128-120000-child2"]


async def test_tab_shows_a_parents_subagent_sessions(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        screen = SessionsScreen(SESSIONS, "20261128-113000-other0")
        app.push_screen(screen)
        await wait_until(pilot, lambda: app.screen is screen and screen.rows, "the picker")
        assert len(screen.rows) == 2
        await pilot.press("down", "tab")
        await wait_until(pilot, lambda: len(screen.rows) == 4, "the children")
        listing = screen.query_one(OptionList)
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(4)]
        assert "└ explore: title 20261128-115000-child1" in prompts[2]
        assert "20261128-115000-child1" in prompts[2].splitlines()[1]
        await pilot.press("tab")
        await wait_until(pilot, lambda: len(screen.rows) == 2, "the fold")
