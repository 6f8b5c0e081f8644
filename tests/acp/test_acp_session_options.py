"""The model as a session config option (and `/model`), the plan as ACP plan updates, and a
turn that fails on the server's error as a JSON-RPC error that masks the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.acp.conftest import API_KEY, RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, Fault, OpenAIServer, Text, ToolCalls


def _option(options: Any) -> Any:
    first = options[0]
    return getattr(first, "root", first)


async def test_the_model_option_lists_the_servers_models_and_switches_the_next_turn(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("On the other model."), Text("On a third."))
    client = RecordingClient()
    environment = forge_environment(llm_server, FORGE_LLM__MODEL="configured-model")
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        offered = _option(session.config_options)
        changed = await connection.set_config_option(
            config_id="model", session_id=sid, value="test-model"
        )
        await connection.prompt(session_id=sid, prompt=prompt_of("one"))
        await connection.prompt(session_id=sid, prompt=prompt_of("/model third-model"))
        [announced] = client.of_kind("config_option_update")
        await connection.prompt(session_id=sid, prompt=prompt_of("two"))
        with pytest.raises(RequestError) as unknown:
            await connection.set_config_option(config_id="colour", session_id=sid, value="red")
    assert offered.current_value == "configured-model"
    assert [o.value for o in offered.options] == ["configured-model", "test-model"]
    assert _option(changed.config_options).current_value == "test-model"
    assert [r.model for r in llm_server.requests] == ["test-model", "third-model"]
    assert _option(announced.config_options).current_value == "third-model"
    assert unknown.value.code == -32602


async def test_the_plan_is_sent_as_an_acp_plan(llm_server: OpenAIServer, workspace: Path) -> None:
    plan = [
        {"step": "Read the code", "status": "done"},
        {"step": "Fix the bug", "status": "in_progress"},
        {"step": "Run the tests", "status": "pending"},
    ]
    llm_server.enqueue(ToolCalls([Call("update_plan", {"plan": plan})]), Text("Planned."))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("plan it"))
    [update] = client.of_kind("plan")
    assert [(e.content, e.status) for e in update.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
        ("Run the tests", "pending"),
    ]
    assert client.questions == []  # planning asks nothing


async def test_a_failed_turn_is_a_json_rpc_error_without_the_key(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Fault(401, {"error": {"message": f"Incorrect API key {API_KEY}"}}))
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        with pytest.raises(RequestError) as raised:
            await connection.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
        llm_server.enqueue(Text("Recovered."))
        after = await connection.prompt(session_id=session.session_id, prompt=prompt_of("again"))
    assert raised.value.code == -32603
    assert "Incorrect API key" in str(raised.value) and API_KEY not in str(raised.value)
    assert after.stop_reason == "end_turn"


async def test_a_commands_output_reaches_its_card_and_keys_stay_masked(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call(
                    "execute_command",
                    {"command": f"echo first line; echo second line; echo {API_KEY}"},
                    id="run1",
                )
            ]
        ),
        Text("Ran it."),
    )
    client = RecordingClient()
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.set_session_mode(session_id=sid, mode_id="auto")
        await connection.prompt(session_id=sid, prompt=prompt_of("run it"))
    updates = [u for u in client.updates if getattr(u, "tool_call_id", None) == "run1"]
    live = [u for u in updates if u.session_update == "tool_call_update" and u.status is None]
    assert live and "first line" in live[-1].content[0].content.text
    assert updates[-1].status == "completed"
    everything = "".join(u.model_dump_json() for u in client.updates)
    assert API_KEY not in everything  # not in the arguments, the output or the result
    assert "first line" in everything


async def test_the_llm_call_limit_ends_a_prompt_with_max_turn_requests(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("list_files", {"path": "."})]), Text("Never asked."))
    client = RecordingClient()
    async with forge_acp(
        client, forge_environment(llm_server), "--max-turns", "1", workspace=workspace
    ) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(session_id=session.session_id, prompt=prompt_of("look"))
    assert answer.stop_reason == "max_turn_requests"
    assert len(llm_server.requests) == 1
