"""All of a session's MCP servers: started in the background, their tools offered to the
registry as they become ready, closed with the runtime."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

from forge.agent.mcp.connection import McpConnection, ServerState
from forge.agent.mcp.servers import configured_servers, secret_values
from forge.agent.mcp.tool import McpTool
from forge.agent.tools.base import Tool
from forge.config.secrets import KNOWN_SECRETS
from forge.config.settings import McpServerSettings


class McpServers:
    """The session's MCP servers. A tool source for `ToolRegistry.add_source`: `tools()`
    is what the ready servers offer right now."""

    def __init__(self, user: Mapping[str, McpServerSettings], workspace: Path) -> None:
        """The servers of `user` settings and the workspace's `.forge/mcp.yaml`; their `env`
        and `headers` values (expanded) become known secrets."""
        self.connections: list[McpConnection] = []
        self.problems: dict[str, str] = {}
        """Entries that could not be used, by name, with why."""
        for entry in configured_servers(user, workspace):
            if entry.settings is None:
                self.problems[entry.name] = entry.problem
            else:
                self.connections.append(McpConnection(entry.name, entry.settings, str(workspace)))
        # Every artefact writer (session file, log, `forge run` output) masks these from now on.
        KNOWN_SECRETS.add(self.secrets())
        self._started = False
        self._cache: tuple[tuple[int, ...], list[Tool]] = ((), [])

    def secrets(self) -> list[str]:
        """The expanded `env`/`headers` values of every server (to redact)."""
        return sorted({value for c in self.connections for value in secret_values(c.settings)})

    def start(self) -> None:
        """Start every enabled server in the background; needs a running event loop (a
        no-op without one, and after the first call)."""
        if self._started:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._started = True
        for connection in self.connections:
            connection.start()

    async def wait_settled(self, limit: float | None = None) -> None:
        """Start the servers if needed; wait until each is ready or failed (`limit` seconds)."""
        self.start()
        await asyncio.gather(*(c.wait_settled(limit) for c in self.connections))

    def tools(self) -> Sequence[Tool]:
        """The tools of the servers that are ready (started here if not yet started)."""
        self.start()
        ready = [c for c in self.connections if c.state is ServerState.READY]
        key = tuple(id(tool) for c in ready for tool in c.tools)
        if key != self._cache[0]:
            tools: list[Tool] = [McpTool(c, tool) for c in ready for tool in c.tools]
            self._cache = (key, tools)
        return self._cache[1]

    def tools_by_server(self) -> dict[str, list[Tool]]:
        """The ready tools grouped by server name."""
        grouped: dict[str, list[Tool]] = {c.name: [] for c in self.connections}
        for tool in self.tools():
            if isinstance(tool, McpTool):
                grouped[tool.connection.name].append(tool)
        return grouped

    def statuses(self) -> dict[str, str]:
        """Each server's status line by name, unusable entries included."""
        lines = {c.name: c.status for c in self.connections}
        lines.update({name: f"failed: {problem}" for name, problem in self.problems.items()})
        return lines

    async def aclose(self) -> None:
        """Close every connection (stdio server processes are stopped)."""
        await asyncio.gather(*(c.aclose() for c in self.connections), return_exceptions=True)
