"""An MCP server's tool as a Forge tool, named `server__tool`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from forge.agent.mcp.arguments import SchemaArguments
from forge.agent.mcp.connection import McpConnection
from forge.agent.mcp.naming import SEPARATOR, tool_name
from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, first_line
from forge.llm.protocols import ToolSpec

if TYPE_CHECKING:
    import mcp.types as types  # the SDK loads when a server connects (docs/adr/0042)

__all__ = ["SEPARATOR", "McpTool", "tool_name"]

PREVIEW_VALUE_LIMIT = 2000
"""Characters of one string argument an approval preview shows before cutting it."""
PREVIEW_LIMIT = 12000
"""Characters of a whole approval preview (the dialog scrolls; this keeps it bounded)."""
SUMMARY_LIMIT = 160
"""Characters of the one-line summary of a call."""


class McpTool(Tool[dict[str, Any]]):
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
        self._arguments = SchemaArguments(self._spec.name, self._spec.parameters)

    @property
    def spec(self) -> ToolSpec:  # type: ignore[override]
        """The tool as the model sees it."""
        return self._spec

    def parse_arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments checked against the server's schema (`forge.agent.mcp.arguments`)."""
        return self._arguments.check(arguments)

    async def run(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
        """Call the tool on its server; faults come back as `ToolError` (a server that is down
        names itself and why, so the model does not retry blindly)."""
        if self.connection.unavailable_reason() is not None:
            raise ToolError(self.connection.unavailable_message(self.name))
        return await self.connection.call(self.remote_name, args)

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """`server__tool` and every argument on one line (`a=1, b=2`), cut to a readable length.

        An MCP tool's arguments are whatever its server defines, so none is singled out."""
        if not isinstance(arguments, Mapping) or not arguments:
            return self.name
        parts = [f"{key}={_compact(value)}" for key, value in arguments.items()]
        return first_line(f"{self.name} {', '.join(parts)}", SUMMARY_LIMIT)

    def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> str:
        """Every argument as pretty-printed JSON, so the user approves exactly what will be
        sent; one very long string value is cut (marked) and the whole is bounded."""
        if not isinstance(arguments, Mapping) or not arguments:
            return "(no arguments)"
        try:
            text = json.dumps(_capped(arguments), indent=2, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(arguments)
        if len(text) > PREVIEW_LIMIT:
            cut = len(text) - PREVIEW_LIMIT
            text = text[:PREVIEW_LIMIT] + f"\n… ({cut} more characters not shown)"
        return text


def _compact(value: Any) -> str:
    """One argument value on one line: JSON, without spaces to spare."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _capped(value: Any) -> Any:
    """`value` with every string longer than `PREVIEW_VALUE_LIMIT` cut and marked."""
    if isinstance(value, str) and len(value) > PREVIEW_VALUE_LIMIT:
        cut = len(value) - PREVIEW_VALUE_LIMIT
        return value[:PREVIEW_VALUE_LIMIT] + f"… ({cut} more characters not shown)"
    if isinstance(value, Mapping):
        return {str(key): _capped(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_capped(item) for item in value]
    return value
