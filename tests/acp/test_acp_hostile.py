"""`forge acp` against a hostile editor and server (issue 34), through a raw JSON-RPC pipe:
a line nested too deep is a parse error, an id JSON cannot hold is answered as null (only
valid JSON is written), lone surrogates from the editor and the server are replaced and the
session goes on, and `session/load` of another workspace's session is refused."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from forge.agent.history.session_file import workspace_key
from tests.acp.conftest import REPO_ROOT, RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import OpenAIServer, Text


def strict_json(line: bytes) -> dict[str, Any]:
    """A line parsed as strict JSON: `Infinity` and `NaN` are refused."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return dict(json.loads(line, parse_constant=refuse))


class RawClient:
    """JSON-RPC lines written to and read from a `forge acp` process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.notifications: list[dict[str, Any]] = []

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def answer(self, line: bytes) -> dict[str, Any]:
        """Send `line`; the next response (notifications on the way are kept)."""
        await self.send(line)
        assert self.process.stdout is not None
        while True:
            received = await asyncio.wait_for(self.process.stdout.readline(), 60)
            assert received, "forge acp ended"
            message = strict_json(received)
            if "method" in message:
                self.notifications.append(message)
                continue
            return message

    async def request(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        reply = await self.answer(json.dumps(message).encode())
        assert "result" in reply, reply
        return reply["result"]

    def text(self) -> str:
        updates = [
            n["params"]["update"] for n in self.notifications if n.get("method") == "session/update"
        ]
        chunks = [u for u in updates if u.get("sessionUpdate") == "agent_message_chunk"]
        return "".join(u["content"]["text"] for u in chunks)


@asynccontextmanager
async def raw_acp(server: OpenAIServer, workspace: Path) -> AsyncIterator[RawClient]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "forge",
        "acp",
        cwd=workspace,
        env={**forge_environment(server), "PYTHONPATH": str(REPO_ROOT)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=2**24,
    )
    try:
        yield RawClient(process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
        assert process.returncode == 0


async def test_a_line_nested_too_deep_is_a_parse_error_and_the_connection_lives(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    async with raw_acp(llm_server, workspace) as client:
        deep = await client.answer(b"[" * 100_000 + b"]" * 100_000)
        object_deep = await client.answer(b'{"a":' * 50_000 + b"1" + b"}" * 50_000)
        result = await client.request(1, "initialize", {"protocolVersion": 1})
    assert deep["id"] is None and deep["error"]["code"] == -32700
    assert "nested deeper" in deep["error"]["message"]
    assert object_deep["error"]["code"] == -32700
    assert result["protocolVersion"] == 1


async def test_an_id_json_cannot_hold_is_answered_as_null(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    async with raw_acp(llm_server, workspace) as client:
        infinite = await client.answer(
            b'{"jsonrpc":"2.0","id":1e999,"method":"initialize","params":{"protocolVersion":1}}'
        )
        unknown = await client.answer(b'{"jsonrpc":"2.0","id":-1e999,"method":"no/such"}')
    assert infinite["id"] is None and infinite["result"]["protocolVersion"] == 1
    assert unknown["id"] is None and unknown["error"]["code"] == -32601


async def test_lone_surrogates_from_the_editor_and_the_server_are_replaced(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("a\ud800b", chunk_size=1), Text("fine"))
    async with raw_acp(llm_server, workspace) as client:
        await client.request(1, "initialize", {"protocolVersion": 1})
        session = await client.request(2, "session/new", {"cwd": str(workspace), "mcpServers": []})
        sid = session["sessionId"]
        # json.dumps writes the lone surrogate as the escape an editor would send.
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "q\udc00!"}]}
        first = await client.request(3, "session/prompt", prompt)
        answered = client.text()
        prompt = {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}
        second = await client.request(4, "session/prompt", prompt)
    assert first["stopReason"] == "end_turn" and answered == "a\ufffdb"
    assert second["stopReason"] == "end_turn" and client.text().endswith("fine")
    sent = [m["content"] for m in llm_server.requests[-1].messages if m["role"] != "system"]
    assert sent == ["q\ufffd!", "a\ufffdb", "again"]


async def test_loading_another_workspaces_session_is_refused_unless_allowed(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    llm_server.enqueue(Text("secret plans"))
    environment = forge_environment(llm_server)
    async with forge_acp(RecordingClient(), environment, workspace=elsewhere) as (connection, _):
        session = await connection.new_session(cwd=str(elsewhere), mcp_servers=[])
        sid = session.session_id
        await connection.prompt(session_id=sid, prompt=prompt_of("plan"))

    refused_client = RecordingClient()
    async with forge_acp(refused_client, environment, workspace=workspace) as (connection, _):
        with pytest.raises(RequestError) as refused:
            await connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    assert refused.value.code == -32002
    assert workspace_key(elsewhere) in str(refused.value)
    assert workspace_key(workspace) in str(refused.value)
    assert "trust.load_other_workspace_sessions" in str(refused.value)
    assert "secret plans" not in refused_client.text()

    allowed = forge_environment(llm_server, FORGE_TRUST__LOAD_OTHER_WORKSPACE_SESSIONS="true")
    allowed_client = RecordingClient()
    async with forge_acp(allowed_client, allowed, workspace=workspace) as (connection, _):
        await connection.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    assert allowed_client.text() == "secret plans"


async def test_a_prompt_above_its_share_is_sent_as_head_and_tail_with_a_notice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    big = "HEAD " + "x" * 2_000_000 + " TAIL"
    llm_server.enqueue(Text("got the gist"))
    client = RecordingClient()
    environment = forge_environment(llm_server, FORGE_CONTEXT__MAX_TOKENS="16000")
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(session_id=session.session_id, prompt=prompt_of(big))
    assert answer.stop_reason == "end_turn"
    assert "more than its share of the context (8,000 tokens)" in client.text()
    assert client.text().endswith("got the gist")
    (request,) = llm_server.requests
    sent = next(m for m in request.messages if m["role"] == "user")["content"]
    assert sent.startswith("HEAD ") and sent.endswith(" TAIL") and len(sent) < 40_000
