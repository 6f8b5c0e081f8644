"""An MCP stdio server opts in to the sandbox (`sandbox: true`): it runs, its tools answer,
and it lives in its own PID namespace (the pid it logs is its namespace's, not the host's);
without bubblewrap it fails to start with a readable reason instead of running unconfined."""

from __future__ import annotations

from pathlib import Path

from forge.agent.mcp import McpServers
from forge.agent.tools.base import ToolContext
from tests.agent.sandbox.support import needs_bubblewrap
from tests.mcp.conftest import stdio_settings


@needs_bubblewrap
async def test_a_sandboxed_server_runs_in_its_own_namespaces(workspace: Path) -> None:
    log = workspace / "starts.log"
    entry = stdio_settings(env={"FORGE_TEST_START_LOG": str(log)}, sandbox=True)
    servers = McpServers({"tools": entry}, workspace)
    try:
        await servers.wait_settled(60)
        assert servers.statuses()["tools"].startswith("ready"), servers.statuses()
        add = next(tool for tool in servers.tools() if tool.name == "tools__add")
        result = await add.run({"a": 2, "b": 40}, ToolContext(workspace))
    finally:
        await servers.aclose()
    assert result.content == "42"
    assert int(log.read_text().split()[0]) < 10  # pid 2 or so: a PID namespace of its own


@needs_bubblewrap
async def test_an_unsandboxed_server_is_not_confined(workspace: Path) -> None:
    log = workspace / "starts.log"
    servers = McpServers(
        {"tools": stdio_settings(env={"FORGE_TEST_START_LOG": str(log)})}, workspace
    )
    try:
        await servers.wait_settled(60)
    finally:
        await servers.aclose()
    assert int(log.read_text().split()[0]) > 10
