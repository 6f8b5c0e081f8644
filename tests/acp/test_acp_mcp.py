"""The editor's `mcpServers` are started like configured servers, once trusted: asked through
`session/request_permission` before the first turn (start this session / trust for this
folder / not now), or trusted for the run with `forge acp --trust-workspace`."""

from __future__ import annotations

import sys
from pathlib import Path

from acp.schema import HttpHeader, HttpMcpServer, McpServerStdio

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.mcp.conftest import SERVER_SCRIPT
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def _editor_server() -> McpServerStdio:
    return McpServerStdio(
        name="tools", command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"], env=[]
    )


def _tool_names(server: OpenAIServer, index: int) -> set[str]:
    return {tool["function"]["name"] for tool in server.requests[index].tools}


async def test_started_once_trusted_for_the_session_and_its_tools_used(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("tools__echo", {"text": "from the editor's server"}, id="e1")]),
        Text("Echoed."),
    )
    client = RecordingClient(answers=["once", "allow_once"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[_editor_server()])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("echo something")
        )
    trust_question, _ = client.questions[0]
    assert "Start the editor's MCP servers?" in (trust_question.title or "")
    assert str(SERVER_SCRIPT) in (trust_question.title or "")
    assert answer.stop_reason == "end_turn"
    assert "tools__echo" in _tool_names(llm_server, 0)
    finished = [u for u in client.of_kind("tool_call_update") if u.status == "completed"]
    assert finished and "from the editor's server" in finished[-1].content[-1].content.text


async def test_not_now_leaves_them_stopped(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(Text("No tools."))
    client = RecordingClient(answers=["no"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[_editor_server()])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
    assert not any(name.startswith("tools__") for name in _tool_names(llm_server, 0))
    assert "not started (not trusted)" in client.text()


async def test_trust_for_the_folder_is_remembered_by_the_next_run(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    environment = forge_environment(llm_server)
    llm_server.enqueue(Text("First."), Text("Second."))
    first = RecordingClient(answers=["always"])
    async with forge_acp(first, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[_editor_server()])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("one"))
    second = RecordingClient()
    async with forge_acp(second, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[_editor_server()])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("two"))
    assert len(first.questions) == 1 and second.questions == []
    assert "tools__echo" in _tool_names(llm_server, 1)


async def test_trust_workspace_starts_them_without_asking(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("Ready."))
    client = RecordingClient()
    async with forge_acp(
        client, forge_environment(llm_server), "--trust-workspace", workspace=workspace
    ) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[_editor_server()])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("hi"))
    assert client.questions == []
    assert "tools__echo" in _tool_names(llm_server, 0)


async def test_an_http_server_from_the_editor_is_reached_with_its_headers(
    llm_server: OpenAIServer, workspace: Path, http_server: str
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("web__read_header", {"name": "x-editor"}, id="h1")]), Text("Read.")
    )
    client = RecordingClient(answers=["allow_once"])
    editor_server = HttpMcpServer(
        type="http", name="web", url=http_server, headers=[HttpHeader(name="X-Editor", value="zed")]
    )
    async with forge_acp(
        client, forge_environment(llm_server), "--trust-workspace", workspace=workspace
    ) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[editor_server])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("read it"))
    assert "web__read_header" in _tool_names(llm_server, 0)
    result = [m for m in llm_server.requests[1].messages if m["role"] == "tool"][-1]
    assert result["content"] == "zed"
