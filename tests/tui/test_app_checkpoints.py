"""/undo and /rewind in the real app: real turns against the loopback server write real files
in a temp workspace; the commands restore them, ask on a conflict, survive a restart, and a
rewound conversation stays valid and is what `--continue` resumes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from forge.agent.history.session_file import SessionStore
from forge.context.conversation import find_problems
from forge.session.restore import RewindPoint
from forge.tui.app import ForgeApp
from forge.tui.screens.restore_conflict import RestoreConflictScreen
from forge.tui.screens.rewind import COMMANDS_MARK, RewindModeScreen, RewindScreen, row_label
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle, wait_until

SIZE = (120, 40)
CONFIG: dict[str, Any] = {
    "tools": {
        "auto_approve": ["read_file", "write_file", "apply_diff"],
        "command_allowlist": ["echo"],
    }
}


def write(path: str, content: str) -> ToolCalls:
    return ToolCalls([Call("write_file", {"path": path, "content": content})])


def read(path: str) -> ToolCalls:
    return ToolCalls([Call("read_file", {"path": path})])


def edit(path: str, search: str, replace: str) -> ToolCalls:
    return ToolCalls(
        [Call("apply_diff", {"path": path, "blocks": [{"search": search, "replace": replace}]})]
    )


def last_notice(app: ForgeApp) -> str:
    return notices(app)[-1]


async def screen_is(pilot: Pilot[object], kind: type, what: str) -> None:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, kind), what)
    await pilot.pause()


async def notice_with(pilot: Pilot[object], text: str) -> None:
    app = pilot.app
    assert isinstance(app, ForgeApp)
    await wait_until(pilot, lambda: any(text in n for n in notices(app)), repr(text))


async def test_undo_restores_the_files_of_the_last_turn_and_says_which(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    llm_server.enqueue(
        read("app.py"),
        edit("app.py", "x = 1", "x = 2"),
        write("new.txt", "new\n"),
        Text("Done."),
    )
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "change app and add a file")
        await wait_idle(pilot)
        assert (workspace / "app.py").read_text() == "x = 2\n"
        await submit(pilot, "/undo")
        await notice_with(pilot, "Restored")
        assert "Undid the file changes of “change app and add a file”" in last_notice(app)
        assert "Restored `app.py`. Removed `new.txt` (created by that turn)." in last_notice(app)
        assert (workspace / "app.py").read_text() == "x = 1\n"
        assert not (workspace / "new.txt").exists()
        await submit(pilot, "/undo")
        await notice_with(pilot, "Nothing to undo")


async def test_undo_of_a_file_edited_since_asks_and_cancel_or_overwrite_is_honoured(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("mine\n")
    llm_server.enqueue(
        read("notes.txt"), write("notes.txt", "forge\n"), write("b.txt", "b\n"), Text("Done.")
    )
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "rewrite notes")
        await wait_idle(pilot)
        (workspace / "notes.txt").write_text("edited by me after forge\n")

        await submit(pilot, "/undo")
        await screen_is(pilot, RestoreConflictScreen, "the conflict dialog")
        assert app.screen.paths == ["notes.txt"]  # type: ignore[attr-defined]
        what = app.screen.query_one("#conflict-what", Static)
        assert str(what.render()) == "Undoing “rewrite notes”"
        await pilot.press("escape")
        await notice_with(pilot, "Undo cancelled")
        assert (workspace / "notes.txt").read_text() == "edited by me after forge\n"
        assert (workspace / "b.txt").exists(), "cancel restores nothing"

        await submit(pilot, "/undo")
        await screen_is(pilot, RestoreConflictScreen, "the conflict dialog again")
        await pilot.press("k")
        await notice_with(pilot, "Kept your edits to `notes.txt`")
        assert (workspace / "notes.txt").read_text() == "edited by me after forge\n"
        assert not (workspace / "b.txt").exists()


async def test_undo_overwrites_an_edited_file_when_told_to(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("mine\n")
    llm_server.enqueue(read("notes.txt"), write("notes.txt", "forge\n"), Text("Done."))
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "rewrite notes")
        await wait_idle(pilot)
        (workspace / "notes.txt").write_text("edited\n")
        await submit(pilot, "/undo")
        await screen_is(pilot, RestoreConflictScreen, "the conflict dialog")
        await pilot.press("o")
        await notice_with(pilot, "Restored `notes.txt`")
        assert (workspace / "notes.txt").read_text() == "mine\n"


async def test_continue_then_undo_restores_the_previous_sessions_last_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("before\n")
    llm_server.enqueue(read("keep.txt"), write("keep.txt", "after\n"), Text("Done."))
    store = configure(llm_server, monkeypatch, config=CONFIG)
    first = make_app(store, workspace)
    async with first.run_test(size=SIZE) as pilot:
        await submit(pilot, "change keep")
        await wait_idle(pilot)
    assert (workspace / "keep.txt").read_text() == "after\n"

    resumed = make_app(store, workspace, resume_latest=True)  # what `forge --continue` builds
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert resumed.session.session_id == first.session.session_id
        await submit(pilot, "/undo")
        await notice_with(pilot, "Restored `keep.txt`")
    assert (workspace / "keep.txt").read_text() == "before\n"


async def test_a_headless_runs_changes_are_undone_by_the_tui_after_continue(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from tests.headless.test_headless_sessions import forge

    (workspace / "cfg.txt").write_text("original\n")
    llm_server.enqueue(read("cfg.txt"), write("cfg.txt", "headless\n"), Text("Done."))
    ran = forge(llm_server, workspace, "run", "--yes", "change cfg")
    assert ran.returncode == 0, ran.stderr
    assert (workspace / "cfg.txt").read_text() == "headless\n"

    app = make_app(configure(llm_server, monkeypatch), workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await submit(pilot, "/undo")
        await notice_with(pilot, "Restored `cfg.txt`")
    assert (workspace / "cfg.txt").read_text() == "original\n"


async def three_turns(pilot: Pilot[object]) -> None:
    await submit(pilot, "first write a")
    await wait_idle(pilot)
    await submit(pilot, "second run a command and write b")
    await wait_idle(pilot)
    await submit(pilot, "third just talk")
    await wait_idle(pilot)


THREE_TURNS = (
    write("a.txt", "a\n"),
    Text("wrote a"),
    ToolCalls([Call("execute_command", {"command": "echo hi"})]),
    write("b.txt", "b\n"),
    Text("ran and wrote b"),
    Text("just talking"),
)


async def choose_turn(pilot: Pilot[object], index: int, mode_key: str) -> None:
    await submit(pilot, "/rewind")
    await screen_is(pilot, RewindScreen, "the rewind list")
    turns = pilot.app.screen.query_one("#rewind-turns", OptionList)
    turns.highlighted = index
    await pilot.press("enter")
    await screen_is(pilot, RewindModeScreen, "the rewind choices")
    await pilot.press(mode_key)


async def test_rewind_lists_turns_and_restores_files_and_conversation(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(*THREE_TURNS)
    store = configure(llm_server, monkeypatch, config=CONFIG)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(pilot)
        conversation = app.session.agent.conversation
        second = next(m for m in conversation.messages if m.content.startswith("second"))
        before_second = [m.id for m in conversation.messages[: conversation.index_of(second.id)]]

        await submit(pilot, "/rewind")
        await screen_is(pilot, RewindScreen, "the rewind list")
        screen = app.screen
        assert isinstance(screen, RewindScreen)
        rows: list[RewindPoint] = screen.rows
        assert [row.title() for row in rows] == [
            "first write a",
            "second run a command and write b",
            "third just talk",
        ]
        assert [row.files for row in rows] == [("a.txt",), ("b.txt",), ()]
        labels = [str(row_label(row, n)) for n, row in enumerate(rows, start=1)]
        assert [COMMANDS_MARK in label for label in labels] == [False, True, False]
        assert screen.query_one("#rewind-turns", OptionList).highlighted == 2, "newest first"
        await pilot.press("up", "enter")
        await screen_is(pilot, RewindModeScreen, "the rewind choices")
        await pilot.press("b")
        await notice_with(pilot, "Rewound to before")

        assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
        assert [m.id for m in conversation.messages] == before_second
        assert find_problems(conversation.messages) == []
        assert app.prompt.text == "second run a command and write b"
        notice = last_notice(app)
        assert (
            "Removed `b.txt` (created since then)." in notice
            and "Commands run since then were not undone" in notice
        )
        expected = [m.to_record() for m in conversation.messages]

    # `forge --continue` resumes the rewound conversation, and lists only the turns left.
    assert [m.to_record() for m in SessionStore().load(app.session.session_id)] == expected
    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [m.to_record() for m in resumed.session.agent.conversation.messages] == expected
        await submit(pilot, "/rewind")
        await screen_is(pilot, RewindScreen, "the rewind list after a restart")
        assert [row.title() for row in resumed.screen.rows] == ["first write a"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("mode_key", "files_restored", "conversation_rewound"),
    [("c", False, True), ("f", True, False)],
)
async def test_rewind_can_restore_only_the_conversation_or_only_the_files(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    mode_key: str,
    files_restored: bool,
    conversation_rewound: bool,
) -> None:
    llm_server.enqueue(*THREE_TURNS)
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(pilot)
        size_before = len(app.session.agent.conversation)
        ledger = app.session.agent.registry.read_ledger()
        assert ledger is not None and ledger.seen((workspace / "a.txt").resolve())
        await choose_turn(pilot, 0, mode_key)
        await notice_with(pilot, "Rewound to before")
        # Restored files, or a rewound conversation: the model must read a.txt again.
        assert not ledger.seen((workspace / "a.txt").resolve())
        assert (not (workspace / "a.txt").exists()) is files_restored
        assert (not (workspace / "b.txt").exists()) is files_restored
        messages = app.session.agent.conversation.messages
        assert (len(messages) == 1) is conversation_rewound
        assert conversation_rewound or len(messages) == size_before
        assert find_problems(messages) == []


async def test_rewind_with_a_conflict_asks_and_esc_changes_nothing(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(*THREE_TURNS)
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(pilot)
        (workspace / "a.txt").write_text("my edit\n")
        size_before = len(app.session.agent.conversation)
        await choose_turn(pilot, 0, "b")
        await screen_is(pilot, RestoreConflictScreen, "the conflict dialog")
        await pilot.press("escape")
        await notice_with(pilot, "Rewind cancelled")
        assert (workspace / "a.txt").read_text() == "my edit\n"
        assert (workspace / "b.txt").exists()
        assert len(app.session.agent.conversation) == size_before


async def test_undo_and_rewind_are_listed_by_help(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from textual.widgets import Markdown

    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/help")
        await wait_until(pilot, lambda: app.screen is not app.screen_stack[0], "help")
        await pilot.pause()
        text = " ".join(str(m.source) for m in app.screen.query(Markdown))
        assert "/undo" in text and "/rewind" in text


async def test_rewind_after_compact_brings_back_the_summarized_turns(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        write("a.txt", "a\n"),
        Text("wrote a. " * 400),  # long turns: the recent tail cannot keep them all
        Text("second answer. " * 400),
        Text("third answer"),
    )
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first write a", "second just talk", "third just talk"):
            await submit(pilot, text)
            await wait_idle(pilot)
        conversation = app.session.agent.conversation
        second = next(m for m in conversation.messages if m.content == "second just talk")
        before_second = [m.to_record() for m in conversation.messages]
        before_second = before_second[: conversation.index_of(second.id)]

        llm_server.enqueue(Text("Summary: a.txt was written; two questions answered."))
        await submit(pilot, "/compact")
        await wait_idle(pilot, "the compaction")
        assert any(m.kind.value != "normal" for m in conversation.messages), "summarized"
        assert [m.to_record() for m in conversation.messages][:3] != before_second[:3]

        await choose_turn(pilot, 1, "c")
        await notice_with(pilot, "Rewound to before")
        assert [m.to_record() for m in conversation.messages][1:] == before_second[1:]
        assert find_problems(conversation.messages) == []
        assert (workspace / "a.txt").exists(), "conversation only: the files stay"


async def test_rewind_opens_on_the_newest_turn_and_down_does_not_wrap_to_the_first(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(*THREE_TURNS)
    app = make_app(configure(llm_server, monkeypatch, config=CONFIG), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await three_turns(pilot)
        await submit(pilot, "/rewind")
        await screen_is(pilot, RewindScreen, "the rewind list")
        turns = app.screen.query_one("#rewind-turns", OptionList)
        assert turns.highlighted == 2, "the newest turn is where the highlight starts"
        await pilot.press("down")
        assert turns.highlighted == 2, "Down on the newest turn stays there"
        await pilot.press("up", "up", "up")
        assert turns.highlighted == 0, "Up on the first turn stays there"
        await pilot.press("down", "down", "down", "enter")
        await screen_is(pilot, RewindModeScreen, "the rewind choices")
        assert app.screen.row.title() == "third just talk"  # type: ignore[attr-defined]
