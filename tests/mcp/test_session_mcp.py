"""MCP tools in a real session: the agent loop against the loopback OpenAI server calls a
real stdio MCP server; approvals, the tool definitions sent and counted, secrets kept out of
the session file, and `.forge/mcp.yaml` over the user's settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.events import ApprovalRequested, ToolCallFinished
from forge.agent.mcp.servers import configured_servers, expand
from forge.agent.trust import WorkspaceTrust
from forge.config.secrets import REDACTED
from forge.config.settings import LLMSettings, McpServerSettings, Settings, ToolsSettings
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished, of_type
from tests.mcp.conftest import SERVER_SCRIPT, stdio_settings
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-mcp-runtime-0123456789"
SECRET = "mcp-secret-7c1d2e3f4a5b"


def settings_for(server: OpenAIServer, auto_approve: list[str] | None = None) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr(KEY), max_retries=0)
    tools = ToolsSettings(auto_approve=auto_approve or ["read_file"])
    entry = stdio_settings(env={"TOKEN": "${FORGE_TEST_MCP_SECRET}"})
    return Settings(llm=llm, tools=tools, mcp_servers={"tools": entry})


@pytest.fixture(autouse=True)
def _secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGE_TEST_MCP_SECRET", SECRET)


async def test_mcp_calls_ask_for_approval_by_default_and_run_once_approved(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("tools__read_env", {"name": "TOKEN"})]),
        Text("done"),
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        await session.servers.wait(60)
        events = await drive(session.agent.run_turn("read the token"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    (request,) = of_type(events, ApprovalRequested)
    assert request.call.name == "tools__read_env"
    (result,) = of_type(events, ToolCallFinished)
    # The server's own secret is masked before the model (and the screen) get it.
    assert result.result == REDACTED and not result.is_error
    assert SECRET not in json.dumps(llm_server.requests[1].body)
    sent = [tool["function"]["name"] for tool in llm_server.requests[0].body["tools"]]
    assert "tools__echo" in sent and "read_file" in sent
    # The session file has the call but never the secret the server returned.
    session_text = session.store.path_for(session.session_id).read_text()
    assert "tools__read_env" in session_text
    assert SECRET not in session_text and KEY not in session_text


async def test_a_server_wildcard_in_auto_approve_approves_its_tools(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("tools__add", {"a": 1, "b": 2})]), Text("3"))
    session = build_session(settings_for(llm_server, ["tools__*"]), workspace)
    try:
        await session.servers.wait(60)
        events = await drive(session.agent.run_turn("add"))
    finally:
        await session.aclose()
    assert of_type(events, ApprovalRequested) == []
    (result,) = of_type(events, ToolCallFinished)
    assert result.result == "3"


async def test_tool_definitions_count_in_the_context_budget(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    bare = build_session(
        Settings(llm=LLMSettings(base_url=llm_server.base_url, api_key=SecretStr(KEY))),
        workspace,
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        await session.servers.wait(60)
        session.context_manager.set_tools(session.registry.specs())
        bare.context_manager.set_tools(bare.registry.specs())
        conversation = session.agent.conversation
        with_mcp = session.context_manager.current_tokens(conversation)
        without = bare.context_manager.current_tokens(bare.agent.conversation)
        assert with_mcp > without
    finally:
        await session.aclose()
        await bare.aclose()


def test_project_file_entries_win_and_bad_entries_say_why(tmp_path: Path) -> None:
    (tmp_path / ".forge").mkdir()
    (tmp_path / ".forge" / "mcp.yaml").write_text(
        "mcpServers:\n"
        "  shared:\n"
        f"    command: {SERVER_SCRIPT}\n"
        "    args: [from-project]\n"
        "  broken:\n"
        "    args: [no-command]\n"
    )
    user = {
        "shared": McpServerSettings(command="user-command"),
        "mine": McpServerSettings(url="http://127.0.0.1:1/mcp"),
    }
    trusted = WorkspaceTrust(tmp_path, trusted_for_run=True)
    entries = {entry.name: entry for entry in configured_servers(user, tmp_path, trusted)}
    assert entries["shared"].settings is not None
    assert entries["shared"].settings.args == ["from-project"]
    assert entries["mine"].settings == user["mine"]
    assert entries["broken"].settings is None and "command" in entries["broken"].problem


def test_references_expand_from_the_environment_and_unset_ones_are_empty() -> None:
    environ = {"TOKEN": "abc"}
    assert expand("Bearer ${TOKEN}", environ) == "Bearer abc"
    assert expand("${MISSING}-x", environ) == "-x"
    assert expand("$TOKEN stays", environ) == "$TOKEN stays"


async def test_the_approval_request_shows_every_argument_of_an_mcp_call(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    long_text = "x" * 5000
    llm_server.enqueue(
        ToolCalls([Call("tools__add", {"a": 1, "b": 2}), Call("tools__echo", {"text": long_text})]),
        Text("done"),
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        await session.servers.wait(60)
        events = await drive(session.agent.run_turn("add, then echo"))
    finally:
        await session.aclose()
    add, echo = of_type(events, ApprovalRequested)
    # The dialog's text is the full pretty JSON; the one line names every argument too.
    assert json.loads(add.preview) == {"a": 1, "b": 2}
    assert '"a": 1' in add.preview and '"b": 2' in add.preview
    assert "a=1" in add.summary and "b=2" in add.summary
    # A very long value is cut and says so, rather than flooding the dialog.
    assert '"text": "xxx' in echo.preview and "more characters not shown" in echo.preview
    assert len(echo.preview) < len(long_text)
    assert "\n" not in echo.summary and len(echo.summary) <= 160


async def test_an_mcp_image_result_reaches_the_model_as_an_image(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """Chat Completions: the tool message names the image; the image follows in a user-role
    message marked as tool-provided (docs/adr/0055, part 2)."""
    llm_server.enqueue(ToolCalls([Call("tools__picture", {})]), Text("a dot"))
    session = build_session(settings_for(llm_server, ["tools__picture"]), workspace)
    try:
        await session.servers.wait(60)
        events = await drive(session.agent.run_turn("show me the picture"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    sent = llm_server.requests[1].messages
    tool = next(m for m in sent if m["role"] == "tool")
    assert tool["content"].startswith("[image: image/png, "), tool["content"]
    follow = sent[sent.index(tool) + 1]
    assert follow["role"] == "user" and "tool-provided" in follow["content"][0]["text"]
    assert follow["content"][1]["text"].endswith("tools__picture image 1")
    assert follow["content"][2]["image_url"]["url"].startswith("data:image/png;base64,")
