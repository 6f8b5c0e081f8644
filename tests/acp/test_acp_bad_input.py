"""Bad input gets a clear JSON-RPC error and loses nothing: no API key (the error names the
fix), an unknown session, a prompt while a turn runs, malformed JSON-RPC."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from acp import RequestError

from tests.acp.conftest import (
    REPO_ROOT,
    RecordingClient,
    forge_acp,
    forge_environment,
    prompt_of,
)
from tests.support.openai_server import OpenAIServer, Text


async def test_no_api_key_is_an_error_that_names_the_fix(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    environment = forge_environment(llm_server)
    del environment["OPENAI_API_KEY"]
    client = RecordingClient()
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        with pytest.raises(RequestError) as raised:
            await connection.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as authenticate:
            await connection.authenticate(method_id="password")
    assert raised.value.code == -32000
    message = str(raised.value)
    assert "FORGE_LLM__API_KEY" in message and "config file" in message
    assert "/settings" in message
    assert "FORGE_LLM__API_KEY" in str(authenticate.value)  # none set: says how
    assert llm_server.requests == []


async def test_unknown_sessions_are_resource_not_found(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        with pytest.raises(RequestError) as prompted:
            await connection.prompt(session_id="no-such-session", prompt=prompt_of("hi"))
        with pytest.raises(RequestError) as loaded:
            await connection.load_session(
                cwd=str(workspace), session_id="20990101-000000-abcdef", mcp_servers=[]
            )
        with pytest.raises(RequestError) as bad_cwd:
            await connection.new_session(cwd="relative/dir", mcp_servers=[])
    assert prompted.value.code == -32002 and "session/new" in str(prompted.value)
    assert loaded.value.code == -32002 and "no session" in str(loaded.value)
    assert bad_cwd.value.code == -32602 and "absolute directory" in str(bad_cwd.value)


async def test_a_prompt_while_a_turn_runs_is_refused_and_the_turn_goes_on(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("slow answer here", chunk_size=2, chunk_delay=0.05))
    started = asyncio.Event()
    client = RecordingClient(on_update=lambda u: started.set())
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await asyncio.sleep(0.5)  # the commands update has arrived
        started.clear()
        first = asyncio.ensure_future(connection.prompt(session_id=sid, prompt=prompt_of("one")))
        await asyncio.wait_for(started.wait(), 30)
        with pytest.raises(RequestError) as raised:
            await connection.prompt(session_id=sid, prompt=prompt_of("two"))
        answer = await asyncio.wait_for(first, 30)
    assert raised.value.code == -32600 and "session/cancel" in str(raised.value)
    assert answer.stop_reason == "end_turn" and client.text() == "slow answer here"
    assert len(llm_server.requests) == 1  # "two" never reached the model
    assert all(m["content"] != "two" for m in llm_server.requests[0].messages)


async def test_malformed_json_rpc_gets_an_error_and_the_connection_stays_usable(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "forge",
        "acp",
        cwd=workspace,
        env={**forge_environment(llm_server), "PYTHONPATH": str(REPO_ROOT)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None

    async def exchange(line: bytes) -> dict[str, object]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line)
        await process.stdin.drain()
        return dict(json.loads(await asyncio.wait_for(process.stdout.readline(), 30)))

    try:
        not_json = await exchange(b"{this is not json\n")
        batch = await exchange(b"[1, 2]\n")
        no_method = await exchange(b'{"jsonrpc": "2.0", "params": {}}\n')
        id_no_method = await exchange(b'{"jsonrpc": "2.0", "id": 11, "params": {}}\n')
        unknown = await exchange(b'{"jsonrpc": "2.0", "id": 7, "method": "no/such"}\n')
        bad_params = await exchange(
            b'{"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": 5}}\n'
        )
        initialize = {"jsonrpc": "2.0", "id": 9, "method": "initialize"}
        initialize["params"] = {"protocolVersion": 1}
        fine = await exchange(json.dumps(initialize).encode() + b"\n")
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
    assert not_json["id"] is None and not_json["error"]["code"] == -32700  # type: ignore[index]
    assert batch["error"]["code"] == -32600  # type: ignore[index]
    assert no_method["error"]["code"] == -32600  # type: ignore[index]
    # A request with an id and no method is answered under its id (its client waits on it).
    assert id_no_method["id"] == 11 and id_no_method["error"]["code"] == -32600  # type: ignore[index]
    assert unknown["id"] == 7 and unknown["error"]["code"] == -32601  # type: ignore[index]
    assert bad_params["id"] == 8 and bad_params["error"]["code"] == -32602  # type: ignore[index]
    assert fine["id"] == 9 and fine["result"]["protocolVersion"] == 1  # type: ignore[index]


async def test_an_unknown_mode_or_session_for_set_mode_is_refused(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as mode:
            await connection.set_session_mode(session_id=session.session_id, mode_id="yolo")
        with pytest.raises(RequestError) as unknown:
            await connection.set_session_mode(session_id="nope", mode_id="auto")
        with pytest.raises(RequestError) as authenticate:
            await connection.authenticate(method_id="password")
    assert mode.value.code == -32602 and "read-only, ask, accept-edits, auto" in str(mode.value)
    assert unknown.value.code == -32002
    # A key is configured: authenticate says none is needed, not "Forge has no API key".
    assert "an API key is configured" in str(authenticate.value)
    assert "has no API key" not in str(authenticate.value)


async def test_an_invalid_config_file_is_named_in_the_error(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text("context:\n  max_tokens: lots\n")
    client = RecordingClient()
    environment = forge_environment(llm_server, FORGE_CONFIG=str(config))
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        with pytest.raises(RequestError) as raised:
            await connection.new_session(cwd=str(workspace), mcp_servers=[])
    assert raised.value.code == -32602
    assert str(config) in str(raised.value) and "max_tokens" in str(raised.value)
