"""Running tools the way the agent loop does: a model-shaped ToolCall through the registry."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from forge.agent.tools.base import ToolContext, ToolResult
from forge.agent.tools.registry import ToolRegistry, default_registry
from forge.llm.messages import ToolCall


async def call_tool(
    name: str,
    workspace: Path,
    *,
    on_output: Callable[[str], None] | None = None,
    command_timeout: float = 120,
    registry: ToolRegistry | None = None,
    **arguments: Any,
) -> ToolResult:
    """Run tool `name` with `arguments` (sent as JSON text, as a model would) in `workspace`.

    Each call gets a fresh registry (a fresh session) unless `registry` is given: pass one to
    let `write_file` know what `read_file` read.
    """
    call = ToolCall(id="call_1", name=name, arguments=json.dumps(arguments))
    context = ToolContext(workspace=workspace, on_output=on_output, command_timeout=command_timeout)
    return await (registry or default_registry()).execute(call, context)
