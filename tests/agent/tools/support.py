"""Running tools the way the agent loop does: a model-shaped ToolCall through the registry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forge.agent.tools import ToolContext, ToolResult, default_registry
from forge.llm.messages import ToolCall


async def call_tool(
    name: str,
    workspace: Path,
    *,
    on_output: Callable[[str], None] | None = None,
    command_timeout: float = 120,
    **arguments: Any,
) -> ToolResult:
    """Run tool `name` with `arguments` (sent as JSON text, as a model would) in `workspace`."""
    call = ToolCall(id="call_1", name=name, arguments=json.dumps(arguments))
    context = ToolContext(workspace=workspace, on_output=on_output, command_timeout=command_timeout)
    return await default_registry().execute(call, context)
