"""An MCP server's tool as a Forge tool, named `server__tool`."""

from __future__ import annotations

from typing import Any

import mcp.types as types

from forge.agent.mcp.connection import McpConnection
from forge.agent.mcp.naming import SEPARATOR, tool_name
from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from forge.llm.protocols import ToolSpec

__all__ = ["SEPARATOR", "McpTool", "tool_name"]


class McpTool(Tool):
    """A tool of an MCP server. It mutates as far as Forge knows, so it asks for approval
    unless `tools.auto_approve` names it or its server (`server__*`). `read_only` is what the
    server's `readOnlyHint` annotation says; only read-only mode looks at it (docs/adr/0029)."""

    mutates = True

    def __init__(self, connection: McpConnection, tool: types.Tool) -> None:
        """The `tool` listed by `connection`'s server."""
        self.connection = connection
        self.remote_name = tool.name
        annotations = tool.annotations
        self.read_only = bool(annotations is not None and annotations.read_only_hint is True)
        self._spec = ToolSpec(
            name=tool_name(connection.name, tool.name),
            description=(tool.description or tool.title or tool.name).strip(),
            parameters=dict(tool.input_schema) or {"type": "object"},
        )

    @property
    def spec(self) -> ToolSpec:  # type: ignore[override]
        """The tool as the model sees it."""
        return self._spec

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Call the tool on its server; faults come back as `ToolError` (a server that is down
        names itself and why, so the model does not retry blindly)."""
        if self.connection.unavailable_reason() is not None:
            raise ToolError(self.connection.unavailable_message(self.name))
        return await self.connection.call(self.remote_name, arguments)
