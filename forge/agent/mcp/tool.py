"""An MCP server's tool as a Forge tool, named `server__tool`."""

from __future__ import annotations

import re
from typing import Any

import mcp.types as types

from forge.agent.mcp.connection import McpConnection
from forge.agent.tools.base import Tool, ToolContext, ToolResult
from forge.llm.protocols import ToolSpec

SEPARATOR = "__"
"""Between the server's name and the tool's in a tool name."""

_NAME_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`server__tool`, with characters the model APIs refuse replaced by `_`, at most 64."""
    return _UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")[:_NAME_LIMIT]


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
        """Call the tool on its server; faults come back as `ToolError`."""
        return await self.connection.call(self.remote_name, arguments)
