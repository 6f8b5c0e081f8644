"""A small real MCP server for the tests, built with the SDK's own server side.

Run as `python tool_server.py stdio` (stdin/stdout) or `python tool_server.py http PORT`
(streamable HTTP on 127.0.0.1:PORT/mcp). Each start appends its pid to $FORGE_TEST_START_LOG
when that is set, so tests can count restarts.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import ToolAnnotations

server = MCPServer("tool-server")

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0f01f00050001ff89993d1d0000000049454e44ae426082"
)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek(text: str) -> str:
    """Return the text reversed; annotated read-only (`readOnlyHint`)."""
    return text[::-1]


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def read_env(name: str) -> str:
    """The value of an environment variable of the server process ("<unset>" if none)."""
    return os.environ.get(name, "<unset>")


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def crash() -> str:
    """Kill the server process at once."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never return."""
    await asyncio.sleep(3600)
    return "never"


@server.tool()
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PNG_1X1, format="png")


@server.tool()
def read_header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header ("<none>" if absent or on stdio)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None) or {}
    return str(headers.get(name.lower(), "<none>"))


@server.tool()
def big(lines: int) -> str:
    """Many numbered lines."""
    return "\n".join(f"line {number}" for number in range(lines))


def main() -> None:
    log = os.environ.get("FORGE_TEST_START_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
