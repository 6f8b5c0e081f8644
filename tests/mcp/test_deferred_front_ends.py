"""Deferred MCP tools in `forge run` and `forge acp` (the editor's servers too), each a real
process with a real stdio MCP server of 120 tools (docs/adr/0054)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from acp.schema import McpServerStdio

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.headless.test_headless import forge_run
from tests.mcp.catalogs import CATALOG_SERVER, forge_catalog
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls


def names(request: RecordedRequest) -> list[str]:
    return [tool["function"]["name"] for tool in request.tools]


def script(server: OpenAIServer) -> None:
    server.enqueue(
        ToolCalls([Call("tool_search", {"query": "create an issue"}, id="s1")]),
        ToolCalls([Call("forgehub__create_issue", {"owner": "o", "repo": "r"}, id="c1")]),
        Text("Filed."),
    )


def assert_deferred_then_loaded(server: OpenAIServer) -> None:
    first, second, third = server.requests
    assert not [name for name in names(first) if name.startswith("forgehub__")]
    assert names(first)[-1] == "tool_search"
    assert "- forgehub (120 tools)" in first.messages[0]["content"]
    assert names(second)[: len(names(first))] == names(first)
    assert names(second)[len(names(first))] == "forgehub__create_issue"
    result = third.messages[-1]["content"]
    assert json.loads(result)["tool"] == "create_issue"


def test_forge_run_defers_and_loads(llm_server: OpenAIServer, workspace: Path) -> None:
    catalog = workspace.parent / "catalog.json"
    catalog.write_text(json.dumps(forge_catalog()))
    entry = {"command": sys.executable, "args": [str(CATALOG_SERVER), str(catalog)]}
    (workspace / ".forge").mkdir()
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"forgehub": entry}}))
    script(llm_server)
    result = forge_run(
        llm_server,
        workspace,
        "--trust-workspace",
        "--yes",
        "file an issue",
        env={"FORGE_MCP__DEFER_TOOLS": "always"},
    )
    assert result.returncode == 0, result.stderr
    assert_deferred_then_loaded(llm_server)


async def test_forge_acp_defers_the_editors_servers_tools(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    catalog = workspace.parent / "catalog.json"
    catalog.write_text(json.dumps(forge_catalog()))
    editor_server = McpServerStdio(
        name="forgehub", command=sys.executable, args=[str(CATALOG_SERVER), str(catalog)], env=[]
    )
    script(llm_server)
    client = RecordingClient(answers=["once", "allow_once"])
    environment = forge_environment(llm_server, FORGE_MCP__DEFER_TOOLS="always")
    async with forge_acp(client, environment, workspace=workspace) as (connection, _):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[editor_server])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("file an issue")
        )
    assert answer.stop_reason == "end_turn"
    assert_deferred_then_loaded(llm_server)
