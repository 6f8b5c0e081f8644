"""How an MCP server's tool is named for the model: `server__tool`."""

from __future__ import annotations

import re

SEPARATOR = "__"
"""Between the server's name and the tool's in a tool name."""

_NAME_LIMIT = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(server: str, tool: str) -> str:
    """`server__tool`, with characters the model APIs refuse replaced by `_`, at most 64."""
    return _UNSAFE.sub("_", f"{server}{SEPARATOR}{tool}")[:_NAME_LIMIT]


def server_prefix(server: str) -> str:
    """What every tool name of `server` starts with (`server__`)."""
    return _UNSAFE.sub("_", f"{server}{SEPARATOR}")
