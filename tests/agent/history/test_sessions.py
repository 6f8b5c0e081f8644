"""Session files: written as the conversation changes, resumed by replay, listed, tolerant of
a torn last line, and never holding an API key."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from forge.agent.history.session_file import (
    SessionLog,
    SessionNotFoundError,
    SessionStore,
)
from forge.agent.history.session_listing import print_sessions
from forge.config.paths import sessions_dir
from forge.context.conversation import Conversation
from forge.llm.messages import Message, MessageKind, ToolCall, assistant, system, tool_result, user

SECRET = "sk-live-ABCDEFGHIJKLMNOP0123456789"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorded_conversation(store: SessionStore, workspace: Path) -> tuple[Conversation, str]:
    log = store.create(workspace, "test-model", redact=[SECRET])
    conversation = Conversation()
    log.attach(conversation)
    call = ToolCall("call_1", "read_file", '{"path": "a.txt"}')
    for message in (
        system("system prompt"),
        user("read a.txt"),
        assistant(tool_calls=(call,)),
        tool_result(call, "contents of a"),
        assistant("done"),
    ):
        conversation.append(message)
    return conversation, log.id


def test_default_directory_is_under_xdg_data_home(isolated_environment: Path) -> None:
    assert SessionStore().directory == sessions_dir()
    assert str(sessions_dir()).startswith(os.environ["XDG_DATA_HOME"])


def test_nothing_is_written_before_the_first_user_message(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    log = store.create(workspace, "m")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(system("prompt"))
    assert not log.path.exists()
    conversation.append(user("hello"))
    assert [r["type"] for r in records(log.path)] == ["header", "message", "message"]
    assert log.path.stat().st_mode & 0o777 == 0o600


def test_every_change_is_flushed_and_resume_rebuilds_the_conversation(
    tmp_path: Path, workspace: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    conversation, session_id = recorded_conversation(store, workspace)
    path = store.path_for(session_id)
    header = records(path)[0]
    assert header["type"] == "header" and header["id"] == session_id
    assert header["workspace"] == str(workspace.resolve()) and header["model"] == "test-model"
    # A summary replacing the tool-call group is recorded as a replacement, then replayed.
    summary = Message(
        role="user", content="[summary]", kind=MessageKind.SUMMARY, replaces=("x", "y")
    )
    removed = conversation.messages[2:4]
    conversation.replace_range(2, 4, [summary])
    conversation.replace_message(0, system("new system prompt"))
    replacement = records(path)[-2]
    assert replacement["type"] == "replace" and replacement["start"] == 2
    assert replacement["removed"] == [m.id for m in removed]

    resumed = store.load(session_id)
    assert [m.to_record() for m in resumed] == [m.to_record() for m in conversation]
    assert resumed[2].kind is MessageKind.SUMMARY
    assert resumed[0].content == "new system prompt"


def test_resume_appends_to_the_same_file(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    _, session_id = recorded_conversation(store, workspace)
    conversation, log = store.resume(session_id)
    log.attach(conversation)
    conversation.append(user("more"))
    conversation.replace_range(0, 0, [system("inserted at the start")])
    again = store.load(session_id)
    assert [m.content for m in again][-1] == "more"
    assert again[0].content == "inserted at the start"
    assert len(again) == 7


def test_a_torn_last_line_is_skipped_with_a_warning(
    tmp_path: Path, workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path / "sessions")
    _, session_id = recorded_conversation(store, workspace)
    path = store.path_for(session_id)
    with path.open("a") as handle:
        handle.write('{"type": "message", "message": {"role": "user", "cont')
    with caplog.at_level(logging.WARNING, logger="forge.agent.history.session_file"):
        conversation, log = store.resume(session_id)
    assert "torn last line" in caplog.text
    assert len(conversation) == 5 and conversation.is_valid()
    # Appending after a torn line starts a fresh line, so the new record survives.
    log.attach(conversation)
    conversation.append(user("after the crash"))
    assert store.load(session_id)[-1].content == "after the crash"


def test_garbage_in_the_middle_never_crashes(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    _, session_id = recorded_conversation(store, workspace)
    path = store.path_for(session_id)
    lines = path.read_text().splitlines()
    lines.insert(3, "not json at all")
    lines.insert(4, json.dumps({"type": "replace", "removed": ["nope"], "inserted": []}))
    path.write_text("\n".join(lines) + "\n")
    assert len(store.load(session_id)) == 5


def test_no_api_key_in_the_file(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    conversation, session_id = recorded_conversation(store, workspace)
    conversation.append(tool_result(ToolCall("c", "execute_command"), f"OPENAI_API_KEY={SECRET}"))
    text = store.path_for(session_id).read_text()
    assert SECRET not in text
    assert "[redacted]" in text


def test_listing_latest_and_print(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    _, first = recorded_conversation(store, workspace)
    _, second = recorded_conversation(store, workspace)
    other_workspace = tmp_path / "other"
    other_workspace.mkdir()
    recorded_conversation(store, other_workspace)
    os.utime(store.path_for(first), (2_000_000_000, 2_000_000_000))  # touched last

    listed = store.list_sessions(workspace)
    assert [info.id for info in listed] == [first, second]
    assert listed[0].title == "read a.txt" and listed[0].messages == 5
    latest = store.latest_for(workspace)
    assert latest is not None and latest.id == first
    assert store.latest_for(tmp_path / "nowhere") is None
    # --continue finds the same one from the files' header lines alone.
    assert store.latest_id_for(workspace) == first
    assert store.latest_id_for(other_workspace) not in (first, second, None)
    assert store.latest_id_for(tmp_path / "nowhere") is None

    assert print_sessions(workspace, store=store) == 0
    out = capsys.readouterr().out
    assert first in out and second in out and "read a.txt" in out


def test_unknown_and_unsafe_ids(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    with pytest.raises(SessionNotFoundError):
        store.load("20200101-000000-abcdef")
    with pytest.raises(ValueError):
        store.load("../../etc/passwd")


def test_find_takes_a_whole_id_or_a_unique_start_or_end(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    _, first = recorded_conversation(store, workspace)
    _, second = recorded_conversation(store, workspace)
    assert store.find(workspace, first) == first
    assert store.find(workspace, second.rsplit("-", 1)[1]) == second
    with pytest.raises(SessionNotFoundError, match="several sessions match"):
        store.find(workspace, first[:4])  # both start with the year
    with pytest.raises(SessionNotFoundError, match="no session with id zzz"):
        store.find(workspace, "zzz")
    with pytest.raises(SessionNotFoundError):
        store.find(workspace, "")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(SessionNotFoundError):  # another workspace's sessions need the whole id
        store.find(other, first.rsplit("-", 1)[1])


def test_summary_dir_is_beside_the_session_file(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    assert store.summary_dir("abc") == tmp_path / "sessions" / "abc.summaries"


def _corrupt_line(path: Path, index: int, how: str) -> None:
    lines = path.read_text().splitlines()
    if how == "torn":
        lines[index] = lines[index][: len(lines[index]) // 2]
    else:
        lines[index] = "\x00\x07garbage{{{" + lines[index][40:80]
    path.write_text("\n".join(lines) + "\n")


def agent_like_session(store: SessionStore, workspace: Path) -> SessionLog:
    """A session as the agent records one: its system prompt names the workspace."""
    log = store.create(workspace, "test-model")
    conversation = Conversation()
    log.attach(conversation)
    call = ToolCall("call_1", "read_file", '{"path": "a.txt"}')
    for message in (
        system(f"You are Forge.\n- Workspace: {workspace}\n- Shell: sh"),
        user("the task"),
        assistant(tool_calls=(call,)),
        tool_result(call, "contents of a"),
        assistant("the answer"),
    ):
        conversation.append(message)
    return log


@pytest.mark.parametrize("how", ["torn", "corrupt"])
def test_a_broken_first_line_still_lists_and_continues_the_session(
    tmp_path: Path, workspace: Path, how: str, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    log = agent_like_session(store, workspace)
    _corrupt_line(log.path, 0, how)

    listed = store.list_sessions(workspace)
    assert [info.id for info in listed] == [log.id]
    assert listed[0].title == "the task" and listed[0].messages == 5
    assert any("header line is unreadable" in problem for problem in listed[0].problems)
    assert store.latest_for(workspace) == listed[0]
    assert store.latest_id_for(workspace) == log.id  # what --continue uses

    resumed, resumed_log = store.resume(log.id)
    assert [m.content for m in resumed][-1] == "the answer" and resumed.is_valid()
    assert any("recovered from the first valid record" in p for p in resumed_log.problems)

    print_sessions(workspace, store=store)
    output = capsys.readouterr()
    assert log.id in output.out
    assert f"warning: session {log.id}: " in output.err


@pytest.mark.parametrize("how", ["torn", "corrupt"])
def test_a_broken_line_anywhere_never_loses_the_session(
    tmp_path: Path, workspace: Path, how: str
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = agent_like_session(store, workspace).id
    path = store.path_for(session_id)
    original = path.read_text()
    count = len(original.splitlines())
    for index in range(count):
        path.write_text(original)
        _corrupt_line(path, index, how)
        listed = store.list_sessions(workspace)
        assert [info.id for info in listed] == [session_id], index
        conversation, log = store.resume(session_id)
        assert log.problems, index
        # Appending after the damage still works and is read back.
        log.attach(conversation)
        conversation.append(user(f"after damage at line {index + 1}"))
        assert store.load(session_id)[-1].content == f"after damage at line {index + 1}"


def test_a_session_lists_the_model_it_continued_on(tmp_path: Path) -> None:
    store = SessionStore()
    _conversation, session_id = recorded_conversation(store, tmp_path)
    log = store.load(session_id)  # reopened, as --continue does
    assert [info.model for info in store.list_sessions(tmp_path)] == ["test-model"]
    log_file = next(info.path for info in store.list_sessions(tmp_path))
    resumed = SessionLog(log_file, {"id": session_id, "model": "test-model"}, exists=True)
    resumed.record_model("other-model")
    resumed.record_model("other-model")  # no change: nothing written
    assert [r["type"] for r in records(log_file)].count("model") == 1
    assert [info.model for info in store.list_sessions(tmp_path)] == ["other-model"]
    assert len(store.load(session_id)) == len(log)  # the record does not disturb a resume


def test_the_tail_of_a_long_session_holds_its_newest_messages(
    tmp_path: Path, workspace: Path
) -> None:
    """A resume's first screen reads only the end of the file (docs/adr/0032)."""
    store = SessionStore(tmp_path / "sessions")
    log = store.create(workspace, "test-model")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(user("read them all"))
    for number in range(200):
        call = ToolCall(f"call_{number}", "read_file", json.dumps({"path": f"f{number}.txt"}))
        conversation.append(assistant(tool_calls=(call,)))
        conversation.append(tool_result(call, f"contents {number} " * 20))
    conversation.append(assistant("All read."))

    tail = store.tail_messages(log.id, 8_000)
    assert tail is not None and 5 < len(tail) < 100
    assert [m.id for m in tail] == [m.id for m in conversation.messages[-len(tail) :]]
    assert store.tail_messages(log.id, 10_000_000) is None, "a short file is replayed whole"

    conversation.replace_range(
        1, 3, [Message(role="user", content="summary", kind=MessageKind.SUMMARY)]
    )
    assert store.tail_messages(log.id, 8_000) is None, "a replacement may change older messages"
