"""`/mcp` and `/context` in the real app with deferred MCP tools (docs/adr/0054): a real
stdio MCP server of 120 tools, one loaded by `tool_search` in a real turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.mcp.catalogs import CATALOG_SERVER, forge_catalog
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle, wait_until


async def test_mcp_marks_loaded_tools_and_context_shows_sent_and_deferred(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, tmp_path: Path
) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(forge_catalog()))
    config = {
        "mcp": {"defer_tools": "always"},
        "mcp_servers": {
            "forgehub": {"command": sys.executable, "args": [str(CATALOG_SERVER), str(catalog)]}
        },
    }
    llm_server.enqueue(
        ToolCalls([Call("tool_search", {"query": "select:forgehub__create_issue"})]),
        Text("Loaded."),
    )
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, "load the issue tool")
        await wait_idle(pilot, app)
        await submit(pilot, "/mcp")
        await wait_until(pilot, lambda: any("MCP servers" in n for n in notices(app)), "/mcp")
        report = next(n for n in notices(app) if "MCP servers" in n).replace("`", "")
        assert "Tools are deferred: 1 loaded by tool_search" in report
        assert "- forgehub__create_issue (loaded) — Create a issue in a repository" in report
        assert "- forgehub__get_issue — Get a issue" in report
        await submit(pilot, "/context")
        await wait_until(
            pilot,
            lambda: any("definitions sent with every request" in n for n in notices(app)),
            "/context",
        )
        context = next(n for n in notices(app) if "definitions sent with every request" in n)
        assert "2 tools" in context and "deferred: 119 tools" in context
    assert [t["function"]["name"] for t in llm_server.requests[1].tools][-1] == (
        "forgehub__create_issue"
    )
