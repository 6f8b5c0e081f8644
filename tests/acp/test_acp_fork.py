"""`session/fork` (issue 42): `forge acp` advertises it, and a fork continues the saved
conversation in a new session while the original stays as it was — driven by the ACP SDK's
client over a real `forge acp` process against the loopback server."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import ClientCapabilities

from forge.agent.history.session_file import SessionStore
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import OpenAIServer, Text


def _user_texts(messages: list[dict[str, object]]) -> list[object]:
    return [m["content"] for m in messages if m["role"] == "user"]


async def test_a_fork_continues_the_conversation_and_leaves_the_original(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("First answer."), Text("Second answer."), Text("Forked answer."))
    client = RecordingClient()
    async with forge_acp(
        client, forge_environment(llm_server), workspace=workspace, initialize=False
    ) as (
        connection,
        _,
    ):
        hello = await connection.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("first question"))
        await connection.prompt(session_id=sid, prompt=prompt_of("second question"))
        forked = await connection.fork_session(session_id=sid, cwd=str(workspace), mcp_servers=[])
        client.clear()
        answer = await connection.prompt(
            session_id=forked.session_id, prompt=prompt_of("a forked question")
        )

    capabilities = hello.agent_capabilities
    assert capabilities is not None and capabilities.session_capabilities is not None
    assert capabilities.session_capabilities.fork is not None
    assert forked.session_id != sid and forked.modes is not None
    # The fork's request holds the whole original conversation, then its own question.
    assert answer.stop_reason == "end_turn" and client.text() == "Forked answer."
    assert _user_texts(llm_server.requests[-1].messages) == [
        "first question",
        "second question",
        "a forked question",
    ]
    # Nothing was replayed to the editor (it has the history); the original is unchanged.
    assert not client.of_kind("user_message_chunk")
    assert "a forked question" not in SessionStore().path_for(sid).read_text()
    fork_file = SessionStore().path_for(forked.session_id).read_text()
    assert f'"forked_from": "{sid}"' in fork_file and "a forked question" in fork_file


async def test_a_fork_before_a_turn_sends_what_the_original_sent_then(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("First answer."), Text("Second answer."), Text("Other way."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("first question"))
        await connection.prompt(session_id=sid, prompt=prompt_of("second question"))
        at_second_turn = llm_server.requests[-1].messages
        forked = await connection.fork_session(
            session_id=sid, cwd=str(workspace), mcp_servers=[], turn=2
        )
        await connection.prompt(session_id=forked.session_id, prompt=prompt_of("second question"))

    assert llm_server.requests[-1].messages == at_second_turn


async def test_forking_an_unknown_session_or_turn_is_an_error(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Only answer."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        with pytest.raises(RequestError, match="no-such-session"):
            await connection.fork_session(
                session_id="no-such-session", cwd=str(workspace), mcp_servers=[]
            )
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("one"))
        with pytest.raises(RequestError, match="turns 1 to 1"):
            await connection.fork_session(
                session_id=session.session_id, cwd=str(workspace), mcp_servers=[], turn=5
            )
