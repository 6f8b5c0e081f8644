"""/rename and /fork in the app at 80x24 (issue 42): the name shows in the header and the
picker; /fork switches to a new session holding the conversation before the turn, its header
naming the parent, the original left as it was; `forge --resume ID --fork` starts in a fork."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from forge.agent.history.session_file import SessionStore
from forge.cli import _build_parser
from forge.tui.app import forked_session
from forge.tui.screens.sessions import SessionsScreen
from forge.tui.widgets.chat_blocks import UserMessageBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until


async def test_rename_shows_in_the_header_and_fork_switches_to_a_child_session(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "first question")
        await wait_idle(pilot)
        await submit(pilot, "second question")
        await wait_idle(pilot)
        original = app.session.session_id
        await submit(pilot, "/rename parser work")
        await wait_until(pilot, lambda: "parser work" in str(app.header.render()), "the name")
        assert SessionStore().list_sessions(workspace)[0].name == "parser work"
        path = SessionStore().path_for(original)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()

        await submit(pilot, "/fork 2")
        await wait_until(pilot, lambda: app.session.session_id != original, "the fork")
        await wait_idle(pilot)
        assert app.session.history.forked_from == original
        assert f"fork of {original}" in str(app.header.render())
        users = [block.text for block in app.chat.query(UserMessageBlock)]
        assert users == ["first question"]  # the conversation before turn 2
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest

        await submit(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the picker")
        picker = app.screen
        assert isinstance(picker, SessionsScreen)
        infos = {row.info.id: row.info for row in picker.rows}
        assert infos[app.session.session_id].forked_from == original
        assert infos[original].label == "parser work"
        await pilot.press("escape")


def test_resume_with_fork_starts_in_a_new_fork(workspace: Path) -> None:
    from tests.agent.history.test_session_search import record_session

    store = SessionStore()
    session_id = record_session(store, workspace, ["an answer"], "x")
    fork_id = forked_session(workspace, session_id[-6:], False)
    assert fork_id is not None and fork_id != session_id
    assert store.list_sessions(workspace)[0].forked_from == session_id
    assert forked_session(workspace, None, True) not in (None, session_id)
    assert forked_session(workspace, "nosuch", False) is None
    assert _build_parser().parse_args(["--resume", session_id, "--fork"]).fork
