"""`/mcp` and `/context` in the real app, with a real stdio MCP server from the config: the
server starts with the app (before any turn), `/mcp` lists it with its tools, `/context`
shows its definitions' tokens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from forge.agent.mcp import ServerState
from tests.mcp.conftest import SERVER_SCRIPT
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_until

SIZE = (120, 40)


async def test_mcp_lists_servers_and_context_shows_their_tokens(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    config = {
        "mcp_servers": {
            "tools": {"command": sys.executable, "args": [str(SERVER_SCRIPT), "stdio"]},
            "off": {"command": sys.executable, "args": ["-c", "pass"], "enabled": False},
        }
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        mcp = app.runtime.mcp
        assert mcp is not None
        await wait_until(
            pilot,
            lambda: all(c.state is not ServerState.STARTING for c in mcp.connections),
            "the MCP server to start without a turn",
        )
        await submit(pilot, "/mcp")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)), "/mcp")
        report = next(n for n in notices(app) if "MCP servers" in n)
        assert "tools: ready (10 tools)" in report.replace("`", "")
        assert "tools__echo" in report and "off: disabled" in report.replace("`", "")
        await submit(pilot, "/context")
        await wait_until(
            pilot, lambda: any("MCP tool definitions" in n for n in notices(app)), "/context"
        )
        context = next(n for n in notices(app) if "MCP tool definitions" in n)
        assert "tools" in context
    assert llm_server.requests == []
