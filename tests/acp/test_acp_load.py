"""`session/load` opens a saved Forge session: its history is replayed to the editor as
session updates, and the next prompt continues the same conversation and file."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import RequestError

from forge.agent.history.session_file import SessionStore, workspace_key
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


async def test_a_saved_session_is_replayed_and_continued(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "made.txt", "content": "m\n"}, id="w1")]),
        Text("Made the file.", reasoning="A file is needed."),
    )
    first = RecordingClient(answers=["allow_once"])
    environment = forge_environment(llm_server)
    async with forge_acp(first, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("make a file"))

    llm_server.enqueue(Text("Still here."))
    second = RecordingClient()
    async with forge_acp(second, environment, workspace=workspace) as (connection, _):
        loaded = await connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        replayed = list(second.updates)
        second.clear()
        answer = await connection.prompt(session_id=sid, prompt=prompt_of("are you there?"))

    kinds = [u.session_update for u in replayed if u.session_update != "available_commands_update"]
    assert kinds == [
        "user_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_thought_chunk",
        "agent_message_chunk",
    ]
    assert replayed[0].content.text == "make a file"
    call = next(u for u in replayed if u.session_update == "tool_call")
    assert call.tool_call_id == "w1" and call.kind == "edit"
    end = next(u for u in replayed if u.session_update == "tool_call_update")
    assert end.status == "completed"
    assert loaded is not None and loaded.modes is not None
    # The next turn continues the conversation, in the same session file.
    assert answer.stop_reason == "end_turn" and second.text() == "Still here."
    sent = [m["content"] for m in llm_server.requests[-1].messages if m["role"] == "user"]
    assert sent[:1] == ["make a file"] and sent[-1] == "are you there?"
    assert "are you there?" in SessionStore().path_for(sid).read_text()


async def test_saved_sessions_are_listed_for_the_workspace(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    llm_server.enqueue(Text("One."), Text("Two."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        mine = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=mine.session_id, prompt=prompt_of("fix the parser"))
        theirs = await connection.new_session(cwd=str(other), mcp_servers=[])
        await connection.prompt(session_id=theirs.session_id, prompt=prompt_of("elsewhere"))
        listed = await connection.list_sessions(cwd=str(workspace))
        everything = await connection.list_sessions()
        found = await connection.list_sessions(cwd=str(workspace), search="ONE.")
        found_elsewhere = await connection.list_sessions(search="two.")
        missed = await connection.list_sessions(cwd=str(workspace), search="two.")
    assert [(s.session_id, s.title) for s in listed.sessions] == [
        (mine.session_id, "fix the parser")
    ]
    assert listed.sessions[0].cwd == workspace_key(workspace)
    assert {s.session_id for s in everything.sessions} == {mine.session_id, theirs.session_id}
    # `_meta.search`: the same search as `forge sessions --search`, with the line found.
    assert [(s.session_id, s.field_meta) for s in found.sessions] == [
        (mine.session_id, {"match": "One."})
    ]
    assert [s.session_id for s in found_elsewhere.sessions] == [theirs.session_id]
    assert missed.sessions == []


async def test_loading_by_part_of_an_id_names_the_whole_one(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Saved."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("keep me"))
        with pytest.raises(RequestError) as raised:
            await connection.load_session(cwd=str(workspace), session_id=sid[-6:], mcp_servers=[])
    assert raised.value.code == -32002 and f"did you mean {sid}?" in str(raised.value)
