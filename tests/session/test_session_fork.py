"""Forking a session (issue 42): the fork holds the conversation before the chosen turn, so
its first request is the original's request at that turn byte for byte, and then diverges;
the original file and the workspace's files are untouched; the header names the parent."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.history.session_file import SessionStore
from forge.agent.history.session_fork import fork_session
from forge.agent.history.session_listing import print_sessions
from forge.config.settings import LLMSettings, Settings
from forge.session.build import SessionOptions, build_session
from tests.session.test_session_verbs import drive
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

QUESTIONS = ("read notes.txt", "what does it say about parsing?", "and about lexing?")


def settings_for(server: OpenAIServer) -> Settings:
    values = {
        "base_url": server.base_url,
        "api_key": SecretStr("sk-test-fork-0123456789abcdef"),
        "max_retries": 0,
        "model": "fork-model",
    }
    return Settings(llm=LLMSettings.model_validate(values))


async def test_the_forks_first_request_is_the_originals_at_that_turn_then_diverges(
    llm_server: OpenAIServer, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workspace / "notes.txt").write_text("parsing is done by hand\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),
        Text("It is about parsing."),
        Text("Parsing is done by hand."),
        Text("Nothing about lexing."),
    )
    original = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    firsts = []
    try:
        for question in QUESTIONS:
            before = len(llm_server.requests)
            await drive(original.run_turn(question))
            firsts.append(llm_server.requests[before].raw)
    finally:
        await original.aclose()
    store = SessionStore()
    path = store.path_for(original.session_id)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    files = (workspace / "notes.txt").read_bytes()

    fork_id = fork_session(store, original.session_id, 2)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest  # the original unchanged
    header = json.loads(store.path_for(fork_id).read_text().splitlines()[0])
    assert header["forked_from"] == original.session_id and header["fork_turn"] == 2

    llm_server.enqueue(Text("Parsing is done by hand."), Text("Another way."))
    fork = build_session(settings_for(llm_server), workspace, SessionOptions(session_id=fork_id))
    try:
        assert fork.history.forked_from == original.session_id
        before = len(llm_server.requests)
        await drive(fork.run_turn(QUESTIONS[1]))
        assert llm_server.requests[before].raw == firsts[1]  # byte for byte
        before = len(llm_server.requests)
        await drive(fork.run_turn("try it another way"))
        diverged = llm_server.requests[before].raw
        assert diverged != firsts[2]
        assert b"try it another way" in diverged and b"and about lexing?" not in diverged
    finally:
        await fork.aclose()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert (workspace / "notes.txt").read_bytes() == files

    print_sessions(workspace, store=store)
    listing = capsys.readouterr().out
    assert f"{fork_id}  " in listing and f"(fork of {original.session_id})" in listing


def test_a_fork_without_a_turn_holds_the_whole_conversation_and_bad_turns_are_refused(
    tmp_path: Path, workspace: Path
) -> None:
    from tests.agent.history.test_session_search import record_session

    store = SessionStore(tmp_path / "sessions")
    session_id = record_session(store, workspace, ["one", "two"], "out")
    whole = fork_session(store, session_id)
    records = [m.to_record() for m in store.load(whole).messages]
    assert records == [m.to_record() for m in store.load(session_id).messages]
    with pytest.raises(ValueError, match="turns 1 to 2, not 3"):
        fork_session(store, session_id, 3)
    first = fork_session(store, session_id, 1)
    assert [m.role for m in store.load(first).messages] == ["system"]
