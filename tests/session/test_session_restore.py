"""`Session.history`'s `rewind_points`, `plan_restore` and `restore`: what /undo and /rewind
use to go back, asking about files edited since Forge wrote them in between — real turns
against the loopback server writing real files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from forge.session.restore import UNDONE_NOTE
from tests.session.test_session_verbs import drive, settings_for
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


@pytest.fixture
async def session(llm_server: OpenAIServer, workspace: Path) -> AsyncIterator[Session]:
    running = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        yield running
    finally:
        await running.aclose()


def write(path: str, content: str) -> ToolCalls:
    return ToolCalls([Call("write_file", {"path": path, "content": content})])


async def two_writing_turns(session: Session, llm_server: OpenAIServer) -> None:
    llm_server.enqueue(
        write("a.txt", "a\n"),
        Text("wrote a"),
        ToolCalls([Call("execute_command", {"command": "echo hi"})]),
        write("b.txt", "b\n"),
        Text("wrote b"),
    )
    await drive(session.run_turn("first write a"))
    await drive(session.run_turn("second run echo and write b"))


async def test_rewind_points_list_the_turns_with_their_files_and_commands(
    session: Session, llm_server: OpenAIServer
) -> None:
    await two_writing_turns(session, llm_server)
    points = session.history.rewind_points()
    assert [(p.title(), p.files, p.ran_commands) for p in points] == [
        ("first write a", ("a.txt",), False),
        ("second run echo and write b", ("b.txt",), True),
    ]
    assert all(point.in_context and point.note == "" for point in points)


async def test_undo_is_planned_then_restored_and_the_turn_is_marked_undone(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    await two_writing_turns(session, llm_server)
    planned = session.history.plan_restore()
    assert planned is not None
    assert planned.title == "second run echo and write b"
    assert planned.conflicts == () and planned.ran_commands
    assert (workspace / "b.txt").exists(), "planning touches nothing"
    result = session.history.restore(planned)
    assert result.text == "Removed `b.txt` (created by that turn)." and not result.failed
    assert not (workspace / "b.txt").exists() and (workspace / "a.txt").exists()
    assert session.history.rewind_points()[1].note == UNDONE_NOTE
    planned = session.history.plan_restore()
    assert planned is not None and planned.title == "first write a"


async def test_a_file_edited_since_is_named_and_kept_unless_overwriting_is_asked_for(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    await two_writing_turns(session, llm_server)
    (workspace / "a.txt").write_text("my edit\n")
    first = session.history.rewind_points()[0]
    planned = session.history.plan_restore(first.id)
    assert planned is not None
    assert planned.conflicts == ("a.txt",) and planned.ran_commands
    kept = session.history.restore(planned)
    assert "Kept your edits to `a.txt`" in kept.text
    assert "Removed `b.txt` (created since then)." in kept.text
    assert (workspace / "a.txt").read_text() == "my edit\n"


async def test_overwriting_a_file_edited_since_restores_it_too(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    await two_writing_turns(session, llm_server)
    (workspace / "a.txt").write_text("my edit\n")
    planned = session.history.plan_restore(session.history.rewind_points()[0].id)
    assert planned is not None and planned.conflicts == ("a.txt",)
    result = session.history.restore(planned, overwrite_conflicts=True)
    assert result.text == "Removed `a.txt`, `b.txt` (created since then)."
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


async def test_nothing_to_undo_and_an_unknown_turn_are_told_apart(
    session: Session, llm_server: OpenAIServer
) -> None:
    assert session.history.plan_restore() is None
    assert session.history.rewind_points() == []
    llm_server.enqueue(Text("just talk"))
    await drive(session.run_turn("hello"))
    assert session.history.plan_restore() is None, "a turn without file changes has nothing to undo"
    with pytest.raises(KeyError):
        session.history.plan_restore("msg_no_such_turn")
