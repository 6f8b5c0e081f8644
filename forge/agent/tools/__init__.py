"""The agent's tools: confined file tools, search, shell commands, and the turn-ending tools.

`default_registry()` holds them all; `ToolRegistry.execute` runs a model's call and turns every
failure into an error result. See `docs/adr/0005-tool-call-format-and-tools.md`.
"""

from __future__ import annotations

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
