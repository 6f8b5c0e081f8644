"""`session/cancel` ends a turn as Esc does — stop reason `cancelled`, pending calls
recorded as cancelled, the session saved — and so does the editor going away mid-turn."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from forge.agent.history.session_file import SessionStore
from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def _saved_messages(session_id: str) -> list[dict[str, Any]]:
    """The message records of the session file, as written."""
    path = SessionStore().path_for(session_id)
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r["message"] for r in records if r.get("type") == "message"]


async def test_cancel_mid_stream_ends_the_turn_cancelled_and_keeps_the_partial_answer(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("word " * 200, chunk_size=5, chunk_delay=0.05))
    first_chunk = asyncio.Event()
    client = RecordingClient(
        on_update=lambda u: first_chunk.set() if u.session_update == "agent_message_chunk" else None
    )
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(
            connection.prompt(session_id=sid, prompt=prompt_of("talk at length"))
        )
        await asyncio.wait_for(first_chunk.wait(), 30)
        await connection.cancel(session_id=sid)
        answer = await asyncio.wait_for(turn, 30)
        # The session goes on: the next prompt is a new turn.
        llm_server.enqueue(Text("Next."))
        after = await connection.prompt(session_id=sid, prompt=prompt_of("go on"))
    assert answer.stop_reason == "cancelled"
    assert after.stop_reason == "end_turn"
    saved = _saved_messages(sid)
    partial = [m for m in saved if m["role"] == "assistant" and m.get("meta", {}).get("partial")]
    assert partial and partial[0]["content"].endswith("[interrupted by the user]")
    assert llm_server.requests[-1].messages[-1]["content"] == "go on"


async def test_cancel_while_asking_records_the_pending_calls_cancelled(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("write_file", {"path": "one.txt", "content": "1\n"}, id="call_one"),
                Call("write_file", {"path": "two.txt", "content": "2\n"}, id="call_two"),
            ]
        )
    )
    client = RecordingClient(answers=["hang"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(
            connection.prompt(session_id=sid, prompt=prompt_of("write two"))
        )
        await asyncio.wait_for(client.asked.wait(), 30)
        await connection.cancel(session_id=sid)
        answer = await asyncio.wait_for(turn, 30)
    assert answer.stop_reason == "cancelled"
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    ends = {u.tool_call_id: u.status for u in client.of_kind("tool_call_update")}
    assert ends == {"call_one": "failed", "call_two": "failed"}
    results = {m["tool_call_id"]: m for m in _saved_messages(sid) if m["role"] == "tool"}
    assert set(results) == {"call_one", "call_two"}
    assert all(m["meta"].get("cancelled") for m in results.values())


async def test_the_editor_going_away_mid_turn_cancels_it_and_the_session_is_saved(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x\n"}, id="c1")])
    )
    client = RecordingClient(answers=["hang"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        process,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(connection.prompt(session_id=sid, prompt=prompt_of("write")))
        await asyncio.wait_for(client.asked.wait(), 30)
        assert process.stdin is not None
        process.stdin.close()  # the editor quits: end of Forge's stdin
        code = await asyncio.wait_for(process.wait(), 30)
        turn.cancel()
    assert code == 0
    assert not (workspace / "x.txt").exists()
    saved = _saved_messages(sid)
    assert saved[-1]["role"] == "tool" and saved[-1]["tool_call_id"] == "c1"
    assert saved[-1]["meta"].get("cancelled")


async def test_cancel_request_of_a_running_prompt_cancels_its_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """`$/cancel_request` (ACP's protocol-level cancellation; the TypeScript SDK sends it when a
    caller aborts a request) of a running `session/prompt` ends the turn as `session/cancel`
    does; one naming a prompt already answered cancels nothing."""
    llm_server.enqueue(Text("word " * 200, chunk_size=5, chunk_delay=0.05))
    first_chunk = asyncio.Event()
    client = RecordingClient(
        on_update=lambda u: first_chunk.set() if u.session_update == "agent_message_chunk" else None
    )
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        raw = connection._conn  # the SDK's JSON-RPC layer: it has no $/cancel_request verb
        prompt_ids: list[int] = []
        raw.add_observer(
            lambda event: (
                prompt_ids.append(event.message["id"])
                if event.message.get("method") == "session/prompt"
                else None
            )
        )
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(
            connection.prompt(session_id=sid, prompt=prompt_of("talk at length"))
        )
        await asyncio.wait_for(first_chunk.wait(), 30)
        await raw.send_notification("$/cancel_request", {"requestId": prompt_ids[0]})
        answer = await asyncio.wait_for(turn, 30)
        llm_server.enqueue(Text("Next.", chunk_delay=0.05))
        first_chunk.clear()
        after = asyncio.ensure_future(connection.prompt(session_id=sid, prompt=prompt_of("go on")))
        await asyncio.wait_for(first_chunk.wait(), 30)
        await raw.send_notification("$/cancel_request", {"requestId": prompt_ids[0]})
        await raw.send_notification("$/cancel_request", {"requestId": 999})
        next_answer = await asyncio.wait_for(after, 30)
    assert answer.stop_reason == "cancelled"
    assert len(client.text()) < len("word " * 200) + len("Next.")
    assert next_answer.stop_reason == "end_turn"
    assert client.text().endswith("Next.")
