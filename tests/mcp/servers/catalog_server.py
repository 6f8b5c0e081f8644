"""A real MCP server (the SDK's low-level server over stdio) whose tools come from a JSON
catalog: `python catalog_server.py CATALOG.json`.

The catalog is `{"name", "instructions", "tools": [{"name", "description", "inputSchema"}]}`;
each tool answers with its name and the arguments it got, as JSON text. Used by the deferred
tools' tests (100+ tools) and by `bench/tool_search_bench.py` (five servers modelled on real
ones' definitions).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def build(catalog: dict[str, Any]) -> Server:
    """The server answering `catalog`'s tools."""
    tools = [
        types.Tool(
            name=entry["name"],
            description=entry.get("description") or "",
            input_schema=entry.get("inputSchema") or {"type": "object"},
        )
        for entry in catalog["tools"]
    ]
    names = {tool.name for tool in tools}

    async def list_tools(context: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(context: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in names:
            text = f"unknown tool {params.name}"
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], is_error=True
            )
        answer = json.dumps({"tool": params.name, "arguments": params.arguments or {}})
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer)])

    return Server(
        catalog["name"],
        instructions=catalog.get("instructions"),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve, build(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))))
