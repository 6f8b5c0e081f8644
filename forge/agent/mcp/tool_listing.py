"""An MCP server's tool listing, checked one tool at a time (docs/adr/0036).

A server's definitions are data from outside. One that fails the protocol's schema (no
name, a schema that is not an object) leaves out only itself: the SDK validates a whole
`tools/list` page at once, so one malformed tool used to make the whole server fail to start.
A definition above `max_schema_bytes` (name, description and input schema as JSON) is left
out too: a 600 KB schema once sent a request of 887 KB against a 16,000-token budget. Each
tool left out is named with why, for a notice.

When the SDK's strict listing fails validation, the listing is read again raw through the
session's dispatcher and each tool validated alone; the valid ones are handed back to the
session (`_absorb_tool_listing`) so calls still find their output schemas. Both are private
parts of the SDK (pinned in pyproject.toml); without them the strict error stands.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

if TYPE_CHECKING:
    import mcp.types as types  # the SDK loads when a server connects (docs/adr/0042)
    from mcp import Client

logger = logging.getLogger(__name__)

MAX_PAGES = 100
"""Pages of a tool listing read at most (a server whose cursors never end cannot hold us)."""


@dataclass
class ToolListing:
    """The tools a server offers that Forge will use, and one line per tool left out."""

    tools: list[types.Tool] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def definition_bytes(tool: types.Tool) -> int:
    """Bytes of a tool's definition as the model receives it: name, description, schema."""
    schema = json.dumps(tool.input_schema, separators=(",", ":"), default=str)
    return len((tool.name + (tool.description or "") + schema).encode("utf-8"))


def within_size(tools: list[types.Tool], max_schema_bytes: int) -> ToolListing:
    """`tools` without the ones whose definition is above `max_schema_bytes`."""
    listing = ToolListing()
    for tool in tools:
        size = definition_bytes(tool)
        if size > max_schema_bytes:
            listing.left_out.append(
                f"{tool.name}: its definition is {size:,} bytes, above "
                f"mcp.max_tool_schema_bytes ({max_schema_bytes:,})"
            )
        else:
            listing.tools.append(tool)
    return listing


async def list_tools(client: Client, max_schema_bytes: int) -> ToolListing:
    """Every usable tool of the server behind `client`, and why the others are left out."""
    try:
        strict = await _strict_pages(client)
    except ValidationError as error:
        raw = await _raw_pages(client)
        if raw is None:
            raise
        logger.warning("an MCP tool listing failed validation (%s); checking tool by tool", error)
        tools, malformed = _valid_tools(raw)
        _absorb(client, tools)
        listing = within_size(tools, max_schema_bytes)
        listing.left_out[:0] = malformed
        return listing
    return within_size(strict, max_schema_bytes)


async def _strict_pages(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def _raw_pages(client: Client) -> list[Any] | None:
    """The raw tool objects of every page, or None when the SDK offers no raw request."""
    dispatcher = getattr(client.session, "_dispatcher", None)
    send = getattr(dispatcher, "send_raw_request", None)
    if send is None:
        return None
    raw_tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await send("tools/list", {"cursor": cursor} if cursor else None, {})
        if not isinstance(page, dict):
            break
        listed = page.get("tools")
        raw_tools.extend(listed if isinstance(listed, list) else [])
        next_cursor = page.get("nextCursor")
        cursor = next_cursor if isinstance(next_cursor, str) and next_cursor else None
        if cursor is None:
            break
    return raw_tools


def _valid_tools(raw_tools: list[Any]) -> tuple[list[types.Tool], list[str]]:
    import mcp.types as types  # loaded by the connection being listed

    tools: list[types.Tool] = []
    malformed: list[str] = []
    for position, raw in enumerate(raw_tools, start=1):
        try:
            tools.append(types.Tool.model_validate(raw, by_name=False))
        except ValidationError as error:
            name = raw.get("name") if isinstance(raw, dict) else None
            label = name[:80] if isinstance(name, str) and name else f"tool #{position}"
            problem = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid"}
            where = ".".join(str(part) for part in problem.get("loc", ())) or "definition"
            malformed.append(f"{label}: malformed ({where}: {problem.get('msg', 'invalid')})")
    return tools, malformed


def _absorb(client: Client, tools: list[types.Tool]) -> None:
    """Give the session the valid tools, as its own listing would have (output schemas)."""
    import mcp.types as types  # loaded by the connection being listed

    absorb = getattr(client.session, "_absorb_tool_listing", None)
    if absorb is not None:
        absorb(types.ListToolsResult(tools=tools), complete=True)
