"""Checkpoints recorded by real `write_file` / `apply_diff` calls of real turns (loopback
server, real files in a temp workspace): grouped by turn, restored by undo, conflicts seen,
kept across a restart, bounded in size, and nothing of git touched."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pydantic import SecretStr

from forge.agent.history.checkpoints import CheckpointStore, checkpoint_dir, describe_outcome
from forge.config.settings import CheckpointSettings, LLMSettings, Settings
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from tests.agent.loop_harness import drive, finished
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-checkpoints-0123456789abcdef"


def settings_for(server: OpenAIServer, max_bytes: int = 1 << 20) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr(KEY), max_retries=0)
    return Settings(llm=llm, checkpoints=CheckpointSettings(max_bytes=max_bytes))


def store_of(session: Session) -> CheckpointStore:
    store = session.agent.checkpoints
    assert isinstance(store, CheckpointStore)
    return store


async def run_turn(session: Session, text: str) -> None:
    events = await drive(session.agent.run_turn(text))
    assert finished(events).reason in {"answered", "completed"}


def write(path: str, content: str) -> ToolCalls:
    return ToolCalls([Call("write_file", {"path": path, "content": content})])


def edit(path: str, search: str, replace: str) -> ToolCalls:
    return ToolCalls(
        [Call("apply_diff", {"path": path, "blocks": [{"search": search, "replace": replace}]})]
    )


def read(path: str) -> ToolCalls:
    return ToolCalls([Call("read_file", {"path": path})])


async def test_undo_restores_every_file_of_the_last_turn_only(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    llm_server.enqueue(
        read("app.py"),
        edit("app.py", "x = 1", "x = 2"),
        write("new.txt", "first\n"),
        Text("turn one done"),
        edit("app.py", "x = 2", "x = 3"),
        write("new.txt", "second\n"),
        write("other/deep.txt", "deep\n"),
        Text("turn two done"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "change app and add new")
        await run_turn(session, "change them again")
        store = store_of(session)
        assert [t.title for t in store.turns()] == ["change app and add new", "change them again"]
        assert list(store.turns()[1].changes) == ["app.py", "new.txt", "other/deep.txt"]

        plan = store.plan_undo()
        assert plan is not None and not plan.conflicts
        outcome = store.apply(plan, overwrite_conflicts=False)
        assert outcome.restored == ["app.py", "new.txt"]
        assert outcome.removed == ["other/deep.txt"]  # the turn created it: undo deletes it
        assert describe_outcome(outcome) == (
            "Restored `app.py`, `new.txt`. Removed `other/deep.txt` (created by that turn)."
        )
        assert (workspace / "app.py").read_text() == "x = 2\n"
        assert (workspace / "new.txt").read_text() == "first\n"
        assert not (workspace / "other" / "deep.txt").exists()

        # A second undo takes back the turn before it.
        plan = store.plan_undo()
        assert plan is not None
        store.apply(plan, overwrite_conflicts=False)
        assert (workspace / "app.py").read_text() == "x = 1\n"
        assert not (workspace / "new.txt").exists()
        assert store.plan_undo() is None
    finally:
        await session.aclose()


async def test_a_file_edited_since_is_a_conflict_and_kept_unless_overwritten(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("original a\n")
    (workspace / "b.txt").write_text("original b\n")
    llm_server.enqueue(
        read("a.txt"),
        read("b.txt"),
        write("a.txt", "forge a\n"),
        write("b.txt", "forge b\n"),
        Text("done"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "rewrite both")
        (workspace / "b.txt").write_text("my own edit\n")
        store = store_of(session)
        plan = store.plan_undo()
        assert plan is not None
        assert [c.path for c in plan.conflicts] == ["b.txt"]
        outcome = store.apply(plan, overwrite_conflicts=False)
        assert outcome.restored == ["a.txt"] and outcome.skipped == ["b.txt"]
        assert (workspace / "a.txt").read_text() == "original a\n"
        assert (workspace / "b.txt").read_text() == "my own edit\n"
        assert "Kept your edits to `b.txt`" in describe_outcome(outcome)
    finally:
        await session.aclose()

    # Overwriting on request puts the earlier content back.
    (workspace / "c.txt").write_text("original c\n")
    llm_server.enqueue(read("c.txt"), write("c.txt", "forge c\n"), Text("done"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "rewrite c")
        (workspace / "c.txt").write_text("edited c\n")
        plan = store_of(session).plan_undo()
        assert plan is not None and [c.path for c in plan.conflicts] == ["c.txt"]
        store_of(session).apply(plan, overwrite_conflicts=True)
        assert (workspace / "c.txt").read_text() == "original c\n"
    finally:
        await session.aclose()


async def test_checkpoints_survive_a_restart(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "keep.txt").write_text("before\n")
    llm_server.enqueue(read("keep.txt"), write("keep.txt", "after\n"), Text("done"))
    first = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(first, "change keep")
        directory = checkpoint_dir(first.log.path)
    finally:
        await first.aclose()
    assert directory.is_dir() and directory.parent == first.log.path.parent
    assert oct(directory.stat().st_mode & 0o777) == "0o700"

    second = build_session(settings_for(llm_server), workspace, SessionOptions(resume_latest=True))
    try:
        assert second.session_id == first.session_id
        plan = store_of(second).plan_undo()
        assert plan is not None and plan.turns[0].title == "change keep"
        store_of(second).apply(plan, overwrite_conflicts=False)
        assert (workspace / "keep.txt").read_text() == "before\n"
    finally:
        await second.aclose()

    # The undo itself was recorded: a third start has nothing left to undo.
    third = build_session(settings_for(llm_server), workspace, SessionOptions(resume_latest=True))
    try:
        assert store_of(third).plan_undo() is None
    finally:
        await third.aclose()


async def test_the_store_stays_within_max_bytes_dropping_the_oldest_turns(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    for number, name in enumerate(("one", "two", "three")):
        (workspace / f"{name}.txt").write_text(str(number) * 400)
    llm_server.enqueue(
        read("one.txt"),
        write("one.txt", "1"),
        Text("done"),
        read("two.txt"),
        write("two.txt", "2"),
        Text("done"),
        read("three.txt"),
        write("three.txt", "3"),
        Text("done"),
    )
    session = build_session(
        settings_for(llm_server, max_bytes=900), workspace, SessionOptions(approve_all=True)
    )
    try:
        for name in ("one", "two", "three"):
            await run_turn(session, f"shrink {name}")
        store = store_of(session)
        assert store.stored_bytes <= 900
        assert [(t.title, t.dropped) for t in store.turns()] == [
            ("shrink one", True),
            ("shrink two", False),
            ("shrink three", False),
        ]
        blobs = list((store.directory / "blobs").iterdir())
        assert sum(blob.stat().st_size for blob in blobs) <= 900 and len(blobs) == 2
    finally:
        await session.aclose()

    # After a restart the dropped turn is still known as dropped, the others still undo.
    again = build_session(
        settings_for(llm_server, max_bytes=900), workspace, SessionOptions(resume_latest=True)
    )
    try:
        store = store_of(again)
        assert [t.dropped for t in store.turns()] == [True, False, False]
        for _ in range(2):
            plan = store.plan_undo()
            assert plan is not None
            store.apply(plan, overwrite_conflicts=False)
        assert store.plan_undo() is None
        assert (workspace / "two.txt").read_text() == "1" * 400
        assert (workspace / "three.txt").read_text() == "2" * 400
        assert (workspace / "one.txt").read_text() == "1"  # its checkpoint was dropped
    finally:
        await again.aclose()


async def test_a_file_larger_than_the_bound_is_told_not_restorable(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("b" * 2000)
    llm_server.enqueue(read("big.txt"), write("big.txt", "small"), Text("done"))
    session = build_session(
        settings_for(llm_server, max_bytes=1000), workspace, SessionOptions(approve_all=True)
    )
    try:
        await run_turn(session, "shrink big")
        store = store_of(session)
        assert store.stored_bytes == 0
        plan = store.plan_undo()
        assert plan is not None
        outcome = store.apply(plan, overwrite_conflicts=False)
        assert [path for path, _ in outcome.failed] == ["big.txt"]
        assert "larger than checkpoints.max_bytes" in describe_outcome(outcome)
        assert (workspace / "big.txt").read_text() == "small"
    finally:
        await session.aclose()


def everything_in(root: Path) -> list[str]:
    return [str(path) for path in root.rglob("*")]


def git(workspace: Path, *arguments: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *arguments], check=True, capture_output=True, text=True
    ).stdout


def git_state(workspace: Path) -> tuple[str, ...]:
    """HEAD, the refs, the stash, the staged entries (blob ids) and the status. Not the index
    file's bytes: `git status` itself refreshes the stat data cached there."""
    return (
        git(workspace, "rev-parse", "HEAD"),
        git(workspace, "for-each-ref"),
        git(workspace, "stash", "list"),
        git(workspace, "ls-files", "--stage"),
        git(workspace, "status", "--porcelain"),
    )


async def test_git_state_is_never_touched(llm_server: OpenAIServer, workspace: Path) -> None:
    git(workspace, "init", "-q")
    git(workspace, "config", "user.email", "t@example.com")
    git(workspace, "config", "user.name", "t")
    (workspace / "tracked.txt").write_text("v1\n")
    git(workspace, "add", "tracked.txt")
    git(workspace, "commit", "-q", "-m", "v1")
    (workspace / "tracked.txt").write_text("v2 uncommitted\n")
    git(workspace, "add", "tracked.txt")  # staged, not committed
    before = git_state(workspace)

    llm_server.enqueue(read("tracked.txt"), write("tracked.txt", "v3 forge\n"), Text("done"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "edit tracked")
        plan = store_of(session).plan_undo()
        assert plan is not None
        store_of(session).apply(plan, overwrite_conflicts=False)
    finally:
        await session.aclose()
    assert (workspace / "tracked.txt").read_text() == "v2 uncommitted\n"
    assert git_state(workspace) == before
    assert not any(".checkpoints" in path for path in everything_in(workspace))


async def test_index_records_are_grouped_by_the_turns_user_message(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(write("a.txt", "a"), write("a.txt", "aa"), Text("done"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "make a")
        store = store_of(session)
        records = [json.loads(line) for line in store.index_path.read_text().splitlines()]
        user_id = next(m.id for m in session.agent.conversation.messages if m.role == "user")
        assert {record["turn"] for record in records} == {user_id}
        change = store.turns()[0].changes["a.txt"]
        assert change.before is None and change.after is not None  # created, written twice
    finally:
        await session.aclose()


async def test_no_api_key_reaches_the_index(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(write("k.txt", "k"), Text("done"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, f"use the key {KEY} to write k")
        index = store_of(session).index_path.read_text()
        assert KEY not in index and "[redacted]" in index
    finally:
        await session.aclose()


async def test_a_changed_bound_applies_to_the_running_session(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session = build_session(settings_for(llm_server, max_bytes=1000), workspace)
    try:
        session.apply_settings(settings_for(llm_server, max_bytes=5000))
        assert store_of(session).max_bytes == 5000
    finally:
        await session.aclose()


async def test_after_undo_or_a_conversation_rewind_the_model_is_told_to_read_again(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    from forge.agent.events import ToolCallFinished
    from forge.agent.history.rewind import rewind_conversation, session_turns

    (workspace / "app.py").write_text("v1\n")
    llm_server.enqueue(
        read("app.py"),
        write("app.py", "v2\n"),
        Text("wrote v2"),
        write("app.py", "v3\n"),  # after /undo put v1 back
        Text("could not write"),
        read("app.py"),
        write("app.py", "v4\n"),
        Text("wrote v4"),
        write("app.py", "v5\n"),  # after the conversation was rewound
        Text("could not write"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await run_turn(session, "write v2")
        store = store_of(session)
        plan = store.plan_undo()
        assert plan is not None
        store.apply(plan, overwrite_conflicts=False)
        assert (workspace / "app.py").read_text() == "v1\n"

        events = await drive(session.agent.run_turn("write v3"))
        (refused,) = [e for e in events if isinstance(e, ToolCallFinished)]
        assert refused.is_error
        assert "restored to an earlier version by /undo or /rewind" in refused.result
        assert "the user or a command" not in refused.result
        assert (workspace / "app.py").read_text() == "v1\n"

        await run_turn(session, "read and write v4")
        assert (workspace / "app.py").read_text() == "v4\n"
        turns = session_turns(session.log.path)
        ledger = session.agent.registry.read_ledger()
        rewind_conversation(session.agent.conversation, session.log, turns[-1].id, ledger)

        # The rewound conversation no longer holds the read: the model must read again.
        events = await drive(session.agent.run_turn("write v5"))
        (refused,) = [e for e in events if isinstance(e, ToolCallFinished)]
        assert refused.is_error and "has not been read" in refused.result
        assert (workspace / "app.py").read_text() == "v4\n"
    finally:
        await session.aclose()
