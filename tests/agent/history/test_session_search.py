"""Searching saved sessions (issue 42): by what was said in them, not by tool output unless
asked, newest first with the line that matched and the full ID; through an index that sees
files added or changed outside Forge and never changes a session file; and naming sessions."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge.agent.history.session_file import SessionStore
from forge.agent.history.session_listing import print_search, print_sessions, rename_session
from forge.agent.history.session_search import INDEX_FILE, FullTextMatcher, SessionSearch
from forge.cli import main
from forge.context.conversation import Conversation
from forge.llm.messages import ToolCall, assistant, system, tool_result, user


def record_session(store: SessionStore, workspace: Path, answers: list[str], tool: str) -> str:
    """A session of len(answers) turns: a question, a read_file call whose output is `tool`,
    then the answer."""
    log = store.create(workspace, "gpt-4o")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(system("You are Forge."))
    for number, answer in enumerate(answers):
        conversation.append(user(f"question {number}"))
        call = ToolCall(f"call_{number}", "read_file", '{"path": "a.py"}')
        conversation.append(assistant(tool_calls=(call,)))
        conversation.append(tool_result(call, tool))
        conversation.append(assistant(answer))
    return log.id


def digests(store: SessionStore) -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in store.directory.glob("*.jsonl")
    }


def test_a_word_of_the_third_answer_finds_the_session_and_tool_output_needs_all(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    wanted = record_session(
        store,
        workspace,
        ["first", "second", "The lexer\nmust skip the Quokka token here"],
        "def quokka_in_tool_output(): pass",
    )
    record_session(store, workspace, ["nothing", "to", "see"], "plain output")
    before = digests(store)

    hits = SessionSearch(store).search("quokka token", workspace)
    assert [(hit.info.id, hit.kind, hit.line) for hit in hits] == [
        (wanted, "answer", "must skip the Quokka token here")
    ]
    assert SessionSearch(store).search("quokka_in_tool", workspace) == []
    with_tools = SessionSearch(store).search("quokka_in_tool", workspace, include_tools=True)
    assert [(hit.info.id, hit.kind) for hit in with_tools] == [(wanted, "tool")]
    assert digests(store) == before  # the session files stay byte for byte
    assert (store.directory / INDEX_FILE).stat().st_mode & 0o777 == 0o600

    assert print_search(workspace, "QUOKKA TOKEN", store=store) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(wanted + "  ")  # the full ID
    assert out[1] == "    answer: must skip the Quokka token here"
    assert print_search(workspace, "quokka_in_tool", store=store) == 1
    assert print_search(workspace, "quokka_in_tool", include_tools=True, store=store) == 0


def test_newest_first_and_other_workspaces_only_when_asked(tmp_path: Path, workspace: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    older = record_session(store, workspace, ["the walrus sings"], "x")
    newer = record_session(store, workspace, ["a walrus again"], "x")
    foreign = record_session(store, elsewhere, ["walrus abroad"], "x")
    for age, session_id in ((300, older), (200, newer), (100, foreign)):
        path = store.path_for(session_id)
        os.utime(path, (path.stat().st_mtime - age, path.stat().st_mtime - age))
    search = SessionSearch(store)
    assert [hit.info.id for hit in search.search("walrus", workspace)] == [newer, older]
    everywhere = [hit.info.id for hit in search.search("walrus")]
    assert everywhere == [foreign, newer, older]


def test_files_copied_in_changed_or_removed_outside_forge_are_seen(
    tmp_path: Path, workspace: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    search = SessionSearch(store)
    first = record_session(store, workspace, ["an ordinary answer"], "x")
    assert search.search("narwhal", workspace) == []  # the index now exists

    other = SessionStore(tmp_path / "other-machine")
    copied = record_session(other, workspace, ["the narwhal migrates"], "x")
    shutil.copy2(other.path_for(copied), store.path_for(copied))
    assert [hit.info.id for hit in search.search("narwhal", workspace)] == [copied]

    # Another process appends an answer to the first session.
    message = assistant("a narwhal appears late").to_record()
    with store.path_for(first).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "message", "message": message}) + "\n")
    assert {hit.info.id for hit in search.search("narwhal", workspace)} == {first, copied}

    store.path_for(copied).unlink()
    assert [hit.info.id for hit in search.search("narwhal", workspace)] == [first]


def test_a_damaged_index_falls_back_to_scanning_with_the_same_answers(
    tmp_path: Path, workspace: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    wanted = record_session(store, workspace, ["the axolotl regrows"], "x")
    store.directory.joinpath(INDEX_FILE).write_bytes(b"not a database at all" * 100)
    hits = SessionSearch(store).search("axolotl", workspace)
    assert [(hit.info.id, hit.line) for hit in hits] == [(wanted, "the axolotl regrows")]


def test_the_picker_matcher_finds_by_answer_and_gives_the_line(
    tmp_path: Path, workspace: Path
) -> None:
    store = SessionStore(tmp_path / "sessions")
    wanted = record_session(store, workspace, ["one", "two", "the pangolin rolls up"], "x")
    record_session(store, workspace, ["other"], "x")
    search = SessionSearch(store)
    sessions = search.sessions(workspace)
    matcher = FullTextMatcher(search, workspace)
    assert [info.id for info in sessions if matcher(info, "PANGOLIN")] == [wanted]
    assert matcher.line_for(wanted) == "the pangolin rolls up"
    assert all(matcher(info, "") for info in sessions)


def test_rename_names_the_session_in_lists_and_search(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(tmp_path / "sessions")
    session_id = record_session(store, workspace, ["an answer"], "x")
    assert rename_session(workspace, session_id[-6:], "  parser rewrite  ", store=store) == 0
    assert capsys.readouterr().out == f"session {session_id} is now named 'parser rewrite'\n"
    assert store.list_sessions(workspace)[0].name == "parser rewrite"
    print_sessions(workspace, store=store)
    assert "parser rewrite" in capsys.readouterr().out
    hits = SessionSearch(store).search("rewrite", workspace)
    assert [(hit.info.id, hit.kind) for hit in hits] == [(session_id, "name")]
    _, log = store.resume(session_id)
    assert log.header["name"] == "parser rewrite"
    assert rename_session(workspace, "nosuchid", "x", store=store) == 1
    assert "no session with id nosuchid" in capsys.readouterr().err


def test_forge_sessions_search_and_rename_on_the_command_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore()
    session_id = record_session(store, workspace, ["the okapi hides"], "x")
    assert main(["-C", str(workspace), "sessions", "--rename", session_id, "okapi work"]) == 0
    assert main(["-C", str(workspace), "sessions", "--search", "okapi"]) == 0
    out = capsys.readouterr().out
    assert f"{session_id}  " in out and "okapi work" in out
    assert main(["-C", str(tmp_path), "sessions", "--search", "okapi"]) == 1
    assert main(["-C", str(tmp_path), "sessions", "--search", "okapi", "--all-workspaces"]) == 0
    assert f"    in {workspace.resolve()}" in capsys.readouterr().out
    # The installed command, as a user runs it.
    process = subprocess.run(
        [sys.executable, "-m", "forge", "-C", str(workspace), "sessions", "--search", "OKAPI"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert session_id in process.stdout
