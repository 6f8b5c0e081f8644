"""The agent's tools: confined file tools, search, shell commands, and the turn-ending tools.

`default_registry()` holds them all; `ToolRegistry.execute` runs a model's call and turns every
failure into an error result. See `docs/adr/0005-tool-call-format-and-tools.md`.

The names below load on first use: `forge` imports `process_guard` (for its signal handling)
before its first frame, and that must not load every tool by way of this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult
    from forge.agent.tools.registry import PreparedCall, ToolRegistry, default_registry
    from forge.agent.tools.workspace import resolve_in_workspace

__all__ = [
    "PreparedCall",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "default_registry",
    "resolve_in_workspace",
]

_HOME_OF = {
    "Tool": "forge.agent.tools.base",
    "ToolContext": "forge.agent.tools.base",
    "ToolError": "forge.agent.tools.base",
    "ToolResult": "forge.agent.tools.base",
    "PreparedCall": "forge.agent.tools.registry",
    "ToolRegistry": "forge.agent.tools.registry",
    "default_registry": "forge.agent.tools.registry",
    "resolve_in_workspace": "forge.agent.tools.workspace",
}


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'forge.agent.tools' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
