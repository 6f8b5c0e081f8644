"""The MCP SDK, imported when a server first connects, in a thread (docs/adr/0042).

Importing `mcp` costs about 0.7 s (pydantic models of the whole protocol, its server side,
uvicorn and click). No session needs it before a server is configured and starting, so
nothing imports it at module level; a connection loads it off the event loop first, and the
modules that touch its types import them inside the functions that only run once it has.
"""

from __future__ import annotations

import asyncio


def import_sdk() -> None:
    """Import every part of the SDK a connection uses (a no-op once imported)."""
    import mcp
    import mcp.client.streamable_http
    import mcp.shared._httpx_utils
    import mcp.types  # noqa: F401


async def load_sdk() -> None:
    """Import the SDK in a worker thread, so the event loop (the UI) never waits for it."""
    await asyncio.to_thread(import_sdk)
