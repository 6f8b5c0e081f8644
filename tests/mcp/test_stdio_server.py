"""A real stdio MCP server (a subprocess built with the SDK's server side): listing, calling,
errors, content types, caps, timeouts, a crash and its one restart, and no orphans."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from forge.agent.mcp import McpServers, ServerState
from forge.agent.mcp.report import servers_report, tool_tokens_by_server
from forge.agent.tools.base import Tool, ToolContext, ToolError
from forge.config.secrets import KNOWN_SECRETS, REDACTED
from forge.llm.tokenizer import TiktokenCounter
from tests.mcp.conftest import alive, started_pids, stdio_settings


async def ready_servers(tmp_path: Path, **changes: object) -> McpServers:
    log = tmp_path / "starts.log"
    env = {"FORGE_TEST_START_LOG": str(log), **dict(changes.pop("env", {}) or {})}  # type: ignore[call-overload]
    servers = McpServers({"tools": stdio_settings(env=env, **changes)}, tmp_path)
    await servers.wait_settled(60)
    return servers


def tool(servers: McpServers, name: str) -> Tool:
    found = [t for t in servers.tools() if t.name == name]
    assert found, f"{name} not offered; servers: {servers.statuses()}"
    return found[0]


async def test_lists_tools_as_server__tool_with_their_schemas(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    try:
        assert servers.statuses() == {"tools": "ready (10 tools)"}
        names = {t.name for t in servers.tools()}
        assert {"tools__echo", "tools__add", "tools__hang", "tools__crash"} <= names
        add = tool(servers, "tools__add").spec
        assert add.description == "Add two whole numbers."
        assert add.parameters["properties"]["a"]["type"] == "integer"
        assert set(add.parameters["required"]) == {"a", "b"}
        # The readOnlyHint annotation is read (docs/adr/0029); without it a tool may write.
        assert getattr(tool(servers, "tools__peek"), "read_only", None) is True
        assert getattr(tool(servers, "tools__add"), "read_only", None) is False
    finally:
        await servers.aclose()


async def test_calls_return_text_errors_and_one_line_images(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    context = ToolContext(tmp_path)
    try:
        result = await tool(servers, "tools__add").run({"a": 2, "b": 40}, context)
        assert result.content == "42" and not result.is_error
        failed = await tool(servers, "tools__fail").run({"reason": "no disk"}, context)
        assert failed.is_error and "refused: no disk" in failed.content
        picture = await tool(servers, "tools__picture").run({}, context)
        assert picture.content.startswith("[image: image/png, ")
        assert picture.content.endswith(" bytes, attached]")
        assert "iVBOR" not in picture.content  # never the base64 in the text
        [image] = picture.images  # the image itself goes to the model (docs/adr/0055)
        assert (image.name, image.width, image.height) == ("tools__picture image 1", 1, 1)
        big = await tool(servers, "tools__big").run({"lines": 20_000}, context)
        assert "line 0\n" in big.content and "line 19999" in big.content
        assert "elided" in big.content and len(big.content) < 25_000
    finally:
        await servers.aclose()


async def test_env_references_are_expanded_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_TEST_SECRET", "s3cret-value-42")
    servers = await ready_servers(tmp_path, env={"TOKEN": "${FORGE_TEST_SECRET}"})
    try:
        assert "s3cret-value-42" in servers.secrets()
        result = await tool(servers, "tools__read_env").run(
            {"name": "TOKEN"}, ToolContext(tmp_path)
        )
        # Set in the server's environment (not "<unset>"), and masked in what the model
        # reads like every secret Forge knows of.
        assert result.content == REDACTED
        # Forge's own secrets are not inherited by the server process.
        other = await tool(servers, "tools__read_env").run(
            {"name": "FORGE_TEST_SECRET"}, ToolContext(tmp_path)
        )
        assert other.content == "<unset>"
    finally:
        await servers.aclose()


async def test_a_hung_call_is_cancelled_by_the_timeout_and_the_server_still_answers(
    tmp_path: Path,
) -> None:
    servers = await ready_servers(tmp_path, timeout=0.5)
    try:
        with pytest.raises(ToolError, match=r"no answer within 0\.5 s"):
            await tool(servers, "tools__hang").run({}, ToolContext(tmp_path))
        again = await tool(servers, "tools__echo").run(
            {"text": "still here"}, ToolContext(tmp_path)
        )
        assert again.content == "still here"
    finally:
        await servers.aclose()


async def test_cancelling_the_caller_cancels_the_call(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    try:
        call = asyncio.ensure_future(tool(servers, "tools__hang").run({}, ToolContext(tmp_path)))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        again = await tool(servers, "tools__echo").run({"text": "ok"}, ToolContext(tmp_path))
        assert again.content == "ok"
    finally:
        await servers.aclose()


async def test_a_crashed_server_restarts_once_on_the_next_call(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    log = tmp_path / "starts.log"
    context = ToolContext(tmp_path)
    try:
        first = started_pids(log)
        assert len(first) == 1
        with pytest.raises(ToolError, match=r"stopped during crash.*restarted on the next call"):
            await tool(servers, "tools__crash").run({}, context)
        assert not alive(first[0])
        assert "restarts on the next call" in servers.statuses()["tools"]
        result = await tool(servers, "tools__echo").run({"text": "back"}, context)
        assert result.content == "back"
        assert len(started_pids(log)) == 2
        echo = tool(servers, "tools__echo")
        with pytest.raises(ToolError, match="stopped during crash"):
            await tool(servers, "tools__crash").run({}, context)
        with pytest.raises(
            ToolError,
            match=r"MCP server tools is down \(crashed twice this session\); "
            r"tool tools__echo is unavailable",
        ):
            await echo.run({"text": "again"}, context)  # a call already on its way
        assert len(started_pids(log)) == 2  # once per session
        assert servers.statuses()["tools"].startswith("failed:")
        assert servers.tools() == []  # the model no longer sees them
    finally:
        await servers.aclose()


async def test_closing_stops_the_server_process(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    (pid,) = started_pids(tmp_path / "starts.log")
    assert alive(pid)
    await servers.aclose()
    assert not alive(pid)
    assert servers.connections[0].state is ServerState.CLOSED


async def test_failing_and_disabled_servers_never_block_and_say_why(tmp_path: Path) -> None:
    servers = McpServers(
        {
            "missing": stdio_settings(command="/nonexistent/mcp-server"),
            "exits": stdio_settings(args=["-c", "import sys; print('bad flag', file=sys.stderr)"]),
            "off": stdio_settings(enabled=False),
        },
        tmp_path,
    )
    try:
        await servers.wait_settled(60)
        statuses = servers.statuses()
        assert statuses["missing"].startswith("failed:") and "nonexistent" in statuses["missing"]
        assert statuses["exits"].startswith("failed:") and "bad flag" in statuses["exits"]
        assert statuses["off"] == "disabled: disabled in the configuration"
        assert servers.tools() == []
    finally:
        await servers.aclose()


async def test_the_report_lists_servers_with_status_tools_and_tokens(tmp_path: Path) -> None:
    servers = await ready_servers(tmp_path)
    broken = McpServers({"gone": stdio_settings(command="/nonexistent/mcp")}, tmp_path)
    await broken.wait_settled(60)
    counter = TiktokenCounter("gpt-4o-mini")
    try:
        tokens = tool_tokens_by_server(servers, counter.count_tools)
        assert tokens["tools"] == counter.count_tools([t.spec for t in servers.tools()]) > 0
        report = servers_report(servers, counter.count_tools)
        assert f"- `tools`: ready (10 tools), {tokens['tools']:,} tokens of definitions" in report
        assert "  - `tools__add` — Add two whole numbers." in report
        assert "- `gone`: failed: command not found '/nonexistent/mcp'" in servers_report(broken)
        assert "No MCP servers configured" in servers_report(McpServers({}, tmp_path))
    finally:
        await servers.aclose()
        await broken.aclose()


async def test_a_known_secret_in_a_result_is_masked_before_the_model_reads_it(
    tmp_path: Path,
) -> None:
    secret = "sk-test-mcp-secret-0123456789"
    KNOWN_SECRETS.add([secret])
    servers = await ready_servers(tmp_path)
    try:
        echoed = await tool(servers, "tools__echo").run(
            {"text": f"key={secret}"}, ToolContext(tmp_path)
        )
        assert secret not in echoed.content and REDACTED in echoed.content
    finally:
        await servers.aclose()
