"""A real streamable-HTTP MCP server on 127.0.0.1 (its own process): listing, calling,
headers with `${VAR}` read from the environment, and an unreachable server failing."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.mcp import McpServers
from forge.agent.tools.base import ToolContext
from forge.config.secrets import REDACTED
from forge.config.settings import McpServerSettings


async def test_lists_and_calls_tools_over_http_with_expanded_headers(
    http_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_TEST_TOKEN", "tok-9f8e7d")
    entry = McpServerSettings(
        url=http_server, headers={"Authorization": "Bearer ${FORGE_TEST_TOKEN}"}
    )
    servers = McpServers({"web": entry}, tmp_path)
    try:
        await servers.wait_settled(60)
        assert servers.statuses() == {"web": "ready (10 tools)"}
        tools = {tool.name: tool for tool in servers.tools()}
        echo = await tools["web__echo"].run({"text": "over http"}, ToolContext(tmp_path))
        assert echo.content == "over http"
        header = await tools["web__read_header"].run(
            {"name": "Authorization"}, ToolContext(tmp_path)
        )
        # The expanded header reached the server; it is a secret, so masked on the way back.
        assert header.content == REDACTED
        assert "Bearer tok-9f8e7d" in servers.secrets()
    finally:
        await servers.aclose()


async def test_an_unreachable_http_server_fails_with_a_reason(tmp_path: Path) -> None:
    servers = McpServers(
        {"gone": McpServerSettings(url="http://127.0.0.1:9/mcp", startup_timeout=20)}, tmp_path
    )
    try:
        await servers.wait_settled(60)
        assert servers.statuses()["gone"].startswith("failed:")
        assert servers.tools() == []
    finally:
        await servers.aclose()
