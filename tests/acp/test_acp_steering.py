"""`_session/steering` (issue 40): an editor using the Claude/Codex adapters' steering
extension sends a message typed during a turn into that turn — added after the running tool
call, in the very next request, shown as the user's message chunk; with no turn running the
answer is `promptRequired` and nothing is sent; Forge advertises the extension (ADR 0057)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import PROTOCOL_VERSION
from acp.schema import ClientCapabilities

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

STEER = "stop, use the v2 API"
GATED = "until [ -e go ]; do sleep 0.05; done; echo called v1"


def steering(session_id: str, text: str) -> dict[str, object]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def test_a_steering_request_joins_the_running_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": GATED})]), Text("switched to v2")
    )
    running = asyncio.Event()
    client = RecordingClient(
        on_update=lambda u: (
            running.set()
            if u.session_update == "tool_call_update" and u.status == "in_progress"
            else None
        )
    )
    environment = forge_environment(llm_server, FORGE_TOOLS__MODE="auto")
    async with forge_acp(client, environment, workspace=workspace, initialize=False) as (
        connection,
        _,
    ):
        hello = await connection.initialize(
            protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        assert (hello.field_meta or {}).get("steering") == {"supported": True}
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        idle = await connection.ext_method("session/steering", steering(sid, "too early"))
        assert idle == {"outcome": "promptRequired"}
        turn = asyncio.ensure_future(connection.prompt(session_id=sid, prompt=prompt_of("go")))
        await asyncio.wait_for(running.wait(), 30)
        answer = await connection.ext_method("session/steering", steering(sid, STEER))
        assert answer == {"outcome": "injected"}
        (workspace / "go").touch()
        done = await asyncio.wait_for(turn, 60)
    assert done.stop_reason == "end_turn"
    assert len(llm_server.requests) == 2
    sent = llm_server.requests[1].messages
    assert sent[-2]["role"] == "tool" and "called v1" in str(sent[-2]["content"])
    assert sent[-1] == {"role": "user", "content": STEER}
    assert all("too early" not in str(m.get("content")) for m in sent)
    assert client.text("user_message_chunk") == STEER
