"""MCP faults told in plain words and servers reconfigured while Forge runs, with the real
SDK stdio test server as a subprocess and the agent loop against the loopback LLM server:
a server that crashes twice is down with a named error for its tools (never "unknown tool")
and its definitions leave the next request; notices say what failed and what happens next;
`mcp_servers` changes start, stop and restart processes between turns."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    ToolCallFinished,
)
from forge.agent.mcp import McpServers, ServerState
from forge.agent.mcp.notices import McpServerNotice
from forge.agent.mcp.project_watch import watch_until_cancelled
from forge.agent.tools.base import ToolError
from forge.agent.trust import WorkspaceTrust
from forge.config.settings import LLMSettings, McpServerSettings, Settings, ToolsSettings
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished, of_type
from tests.mcp.conftest import SERVER_SCRIPT, alive, started_pids, stdio_settings
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-mcp-faults-0123456789"


def logged(tmp_path: Path, name: str, **changes: object) -> McpServerSettings:
    """The test server, writing each start's pid to `name`.log."""
    return stdio_settings(env={"FORGE_TEST_START_LOG": str(tmp_path / f"{name}.log")}, **changes)


def sent_tools(server: OpenAIServer, index: int) -> list[str]:
    return [tool["function"]["name"] for tool in server.requests[index].body.get("tools", [])]


async def eventually(condition: object, what: str, limit: float = 30) -> None:
    end = time.monotonic() + limit
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_a_server_that_crashes_twice_is_down_with_a_named_error_and_leaves_the_list(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    settings = Settings(
        llm=LLMSettings(base_url=llm_server.base_url, api_key=SecretStr(KEY), max_retries=0),
        tools=ToolsSettings(auto_approve=["tools__*"]),
        mcp_servers={"tools": logged(tmp_path, "tools")},
    )
    llm_server.enqueue(
        ToolCalls([Call("tools__crash", {})]),
        ToolCalls([Call("tools__echo", {"text": "back"})]),  # restarts it (once)
        ToolCalls([Call("tools__crash", {})]),
        ToolCalls([Call("tools__echo", {"text": "again"})]),  # the model still tries
        Text("gave up"),
    )
    session = build_session(settings, workspace)
    notices: list[McpServerNotice] = []
    assert session.servers.mcp is not None
    session.servers.mcp.subscribe(notices.append)
    try:
        await session.servers.wait(60)
        events = await drive(session.agent.run_turn("use the tools"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    results = [(e.call.name, e.result, e.is_error) for e in of_type(events, ToolCallFinished)]
    assert results[0][0] == "tools__crash" and results[0][2]
    assert "restarted on the next call" in results[0][1]
    assert results[1] == ("tools__echo", "back", False)
    assert "down for the rest of the session" in results[2][1]
    assert results[3] == (
        "tools__echo",
        "MCP server tools is down (crashed twice this session); tool tools__echo is unavailable",
        True,
    )
    assert "unknown tool" not in results[3][1]
    # Offered while it could run; no longer offered once down.
    assert "tools__echo" in sent_tools(llm_server, 2)
    assert not [name for name in sent_tools(llm_server, 3) if name.startswith("tools__")]
    assert [n.kind for n in notices] == ["crashed", "down"]
    assert notices[1].text().startswith("MCP server tools is down (crashed twice this session): ")
    assert (
        notices[1]
        .text()
        .endswith("Its tools are unavailable for the rest of the session; see /mcp.")
    )
    assert len(started_pids(tmp_path / "tools.log")) == 2


async def test_a_server_that_fails_to_start_is_told_in_plain_words(tmp_path: Path) -> None:
    servers = McpServers({"github": stdio_settings(command="npx-not-installed")}, tmp_path)
    notices: list[McpServerNotice] = []
    servers.subscribe(notices.append)
    try:
        await servers.wait_settled(60)
        (notice,) = notices
        assert notice.text() == (
            "MCP server github failed to start: command not found 'npx-not-installed'. "
            "Its tools are unavailable; see /mcp."
        )
        assert servers.explain_missing("github__create_issue") == (
            "MCP server github failed to start (command not found 'npx-not-installed'); "
            "tool github__create_issue is unavailable"
        )
        assert servers.explain_missing("other__tool") is None
    finally:
        await servers.aclose()


async def test_a_call_of_a_failed_servers_tool_is_a_named_error_not_unknown_tool(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    settings = Settings(
        llm=LLMSettings(base_url=llm_server.base_url, api_key=SecretStr(KEY), max_retries=0),
        mcp_servers={"github": McpServerSettings(command="/nonexistent/server")},
    )
    session = build_session(settings, workspace)
    try:
        await session.servers.wait(60)
        with pytest.raises(ToolError, match=r"^MCP server github failed to start \(command"):
            session.registry.get("github__create_issue")
        with pytest.raises(ToolError, match="unknown tool"):
            session.registry.get("nothing_like_it")
    finally:
        await session.aclose()


async def test_settings_changes_start_stop_and_restart_servers_between_turns(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    llm = LLMSettings(base_url=llm_server.base_url, api_key=SecretStr(KEY), max_retries=0)
    before = Settings(
        llm=llm,
        mcp_servers={
            "keep": logged(tmp_path, "keep"),
            "gone": logged(tmp_path, "gone"),
            "change": logged(tmp_path, "change"),
            "off": logged(tmp_path, "off"),
        },
    )
    session = build_session(before, workspace)
    mcp = session.servers.mcp
    assert mcp is not None
    notices: list[McpServerNotice] = []
    mcp.subscribe(notices.append)
    try:
        await session.servers.wait(60)
        pids = {name: started_pids(tmp_path / f"{name}.log") for name in before.mcp_servers}
        assert all(len(found) == 1 for found in pids.values())
        after = before.model_copy(
            update={
                "mcp_servers": {
                    "keep": before.mcp_servers["keep"],
                    "change": logged(tmp_path, "change", timeout=5),
                    "off": logged(tmp_path, "off", enabled=False),
                    "new": logged(tmp_path, "new"),
                }
            }
        )
        description = session.apply_settings(after)
        assert "MCP servers" in description
        assert await mcp.reconfigured() == "started new; stopped gone, off; restarted change"
        await session.servers.wait(60)
        names = {tool.name.split("__")[0] for tool in mcp.tools()}
        assert names == {"keep", "change", "new"}
        assert "gone__echo" not in session.registry.names()
        assert not alive(pids["gone"][0]) and not alive(pids["off"][0])
        assert not alive(pids["change"][0])
        assert len(started_pids(tmp_path / "change.log")) == 2
        assert alive(pids["keep"][0]) and started_pids(tmp_path / "keep.log") == pids["keep"]
        assert len(started_pids(tmp_path / "new.log")) == 1
        with pytest.raises(ToolError, match="removed from the configuration"):
            session.registry.get("gone__echo")
        with pytest.raises(ToolError, match="disabled in the configuration"):
            session.registry.get("off__echo")
        assert notices[-1].kind == "reloaded"
        assert notices[-1].text() == (
            "MCP servers reloaded: started new; stopped gone, off; restarted change."
        )
    finally:
        await session.aclose()


async def test_editing_the_project_file_reconfigures_through_the_watcher(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    servers = McpServers({}, workspace, WorkspaceTrust(workspace, trusted_for_run=True))
    watcher = asyncio.ensure_future(
        watch_until_cancelled(workspace, lambda: servers.reconfigure({}))
    )
    try:
        await asyncio.sleep(0.5)  # the watch is registered
        (workspace / ".forge").mkdir()
        await asyncio.sleep(0.5)
        log = tmp_path / "project.log"
        (workspace / ".forge" / "mcp.yaml").write_text(
            "mcpServers:\n"
            "  project:\n"
            f"    command: {stdio_settings().command}\n"
            f"    args: [{SERVER_SCRIPT}, stdio]\n"
            f"    env: {{FORGE_TEST_START_LOG: {log}}}\n"
        )
        await eventually(lambda: [c.name for c in servers.connections] == ["project"], "start")
        await servers.wait_settled(60)
        assert servers.connections[0].state is ServerState.READY
        (workspace / ".forge" / "mcp.yaml").write_text("mcpServers: {}\n")
        await eventually(lambda: servers.connections == [], "the server to stop")
        await eventually(lambda: not alive(started_pids(log)[0]), "the process to end")
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await servers.aclose()


def test_a_reload_describes_server_changes_by_name_never_by_value() -> None:
    from forge.session.settings_changes import describe_changes

    old = Settings(mcp_servers={"a": McpServerSettings(command="x", env={"T": "literal-1234"})})
    new = Settings(
        mcp_servers={
            "a": McpServerSettings(command="x", env={"T": "literal-5678"}),
            "b": McpServerSettings(url="http://127.0.0.1:1/mcp"),
        }
    )
    assert describe_changes(old, new) == ["mcp_servers: a, b changed"]


async def test_a_server_removed_during_a_turn_keeps_serving_it_and_stops_after(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    settings = Settings(
        llm=LLMSettings(base_url=llm_server.base_url, api_key=SecretStr(KEY), max_retries=0),
        mcp_servers={"tools": logged(tmp_path, "tools")},
    )
    llm_server.enqueue(ToolCalls([Call("tools__echo", {"text": "still here"})]), Text("done"))
    session = build_session(settings, workspace)
    mcp = session.servers.mcp
    assert mcp is not None
    try:
        await session.servers.wait(60)
        (pid,) = started_pids(tmp_path / "tools.log")
        results: list[ToolCallFinished] = []
        async for event in session.agent.run_turn("echo"):
            if isinstance(event, ApprovalRequested):
                # The user removes the server while the turn waits on this call.
                session.apply_settings(settings.model_copy(update={"mcp_servers": {}}))
                await asyncio.sleep(0.5)
                assert alive(pid) and [c.name for c in mcp.connections] == ["tools"]
                event.future.set_result(ApprovalDecision(ApprovalVerdict.APPROVE_ONCE))
            elif isinstance(event, ToolCallFinished):
                results.append(event)
        assert [(r.result, r.is_error) for r in results] == [("still here", False)]
        assert await mcp.reconfigured() == "stopped tools"
        assert mcp.connections == [] and not alive(pid)
        assert not [name for name in session.registry.names() if name.startswith("tools__")]
    finally:
        await session.aclose()


async def test_a_reload_tells_each_server_once_with_its_real_state(tmp_path: Path) -> None:
    # Issue 18 item 7: the reload said "started broken, time" and then, apart, that broken
    # had failed to start. One notice now, after the started servers settled.
    servers = McpServers({}, tmp_path)
    notices: list[McpServerNotice] = []
    servers.subscribe(notices.append)
    try:
        await servers.wait_settled(60)
        servers.reconfigure(
            {"broken": stdio_settings(command="no-such-mcp-command"), "time": stdio_settings()}
        )
        description = await servers.reconfigured()
        assert description == (
            "started time; broken failed to start: command not found 'no-such-mcp-command'"
        )
        (notice,) = notices
        assert notice.kind == "reloaded" and notice.is_error
        assert notice.text() == (
            "MCP servers reloaded: started time; broken failed to start: command not found "
            "'no-such-mcp-command'. A server that failed has no tools; see /mcp."
        )
        assert servers.statuses()["time"].startswith("ready")
        # The next reload tells its own servers the same way (a failed server that goes is
        # not "stopped": it was not running).
        servers.reconfigure({"time": stdio_settings(), "other": stdio_settings(command="nope")})
        assert await servers.reconfigured() == "other failed to start: command not found 'nope'"
        assert [n.kind for n in notices] == ["reloaded", "reloaded"]
    finally:
        await servers.aclose()


async def test_a_reload_that_only_starts_working_servers_is_not_an_error(tmp_path: Path) -> None:
    servers = McpServers({}, tmp_path)
    notices: list[McpServerNotice] = []
    servers.subscribe(notices.append)
    try:
        await servers.wait_settled(60)  # the session's servers run (none yet)
        servers.reconfigure({"time": stdio_settings()})
        assert await servers.reconfigured() == "started time"
        assert servers.statuses()["time"].startswith("ready"), "started means running"
        (notice,) = notices
        assert not notice.is_error
        assert notice.text() == "MCP servers reloaded: started time."
    finally:
        await servers.aclose()
