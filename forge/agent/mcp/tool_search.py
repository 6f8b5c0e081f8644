"""`tool_search`: load deferred MCP tools by what they do, or by name (docs/adr/0054).

A query loads the tools it matches best (at most 5, BM25 over names, descriptions and
parameter names) at once; `select:a,b` loads exact names. The result names each tool with the
first line of its description; the definitions themselves arrive with the next request, at
the end of the tool list, and stay for the session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, first_line
from forge.llm.protocols import ToolSpec

TOOL_SEARCH = "tool_search"
SELECT = "select:"


class ToolLoader(Protocol):
    """What `tool_search` loads from (`forge.agent.mcp.deferral.ToolDeferral`)."""

    def available(self) -> list[Tool]:
        """Every tool that may be loaded (or already is)."""
        ...

    def search(self, query: str) -> list[Tool]:
        """The tools `query` matches best, best first."""
        ...

    def load(self, names: Iterable[str]) -> list[str]:
        """Load `names`; the names newly loaded."""
        ...


class ToolSearchArgs(ToolArguments):
    """`tool_search`'s arguments."""

    query: str = Field(
        description=(
            'Words for what the tool should do (e.g. "create github issue"), or '
            '"select:name,name" for exact tool names.'
        )
    )


class ToolSearchTool(ModelTool[ToolSearchArgs]):
    """Loads the deferred MCP tools a query matches; read-only, never asks for approval."""

    spec = ToolSpec(
        name=TOOL_SEARCH,
        description=(
            "Load MCP tools whose definitions are not sent yet (the servers are listed in the "
            "system prompt). A query loads the best matches, at most 5; "
            '"select:name,name" loads those exact names. Loaded tools can be called from '
            "your next reply on and stay loaded."
        ),
        parameters=tool_schema(ToolSearchArgs),
    )
    arguments_model = ToolSearchArgs

    def __init__(self, deferral: ToolLoader) -> None:
        self.deferral = deferral

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "tool_search: create issue"."""
        return f"tool_search: {first_line(str(arguments.get('query') or '').strip())}"

    async def run(self, args: ToolSearchArgs, context: ToolContext) -> ToolResult:
        """Load the matches and say which; `ToolError` when nothing matches."""
        query = args.query.strip()
        deferral = self.deferral
        missing: list[str] = []
        if query.lower().startswith(SELECT):
            found = self._selected(query[len(SELECT) :], missing)
        else:
            found = deferral.search(query)
        if not found:
            unknown = f" (unknown: {', '.join(missing)})" if missing else ""
            raise ToolError(
                f"no MCP tool matches {query!r}{unknown}; try other words for what the tool "
                "does, or the name of its server"
            )
        added = set(deferral.load(tool.name for tool in found))
        lines = []
        for tool in found:
            state = "loaded" if tool.name in added else "already loaded"
            lines.append(f"- {tool.name} ({state}): {_summary(tool)}")
        if missing:
            lines.append(f"Unknown names, not loaded: {', '.join(missing)}")
        header = f"{len(added)} tool{'s' if len(added) != 1 else ''} loaded; call them directly:"
        return ToolResult(
            content="\n".join([header, *lines]),
            metadata={"loaded": sorted(added)},
        )

    def _selected(self, names: str, missing: list[str]) -> list[Tool]:
        """The tools `names` (comma-separated) names: whole names, or a server's own tool
        name when only one server has it. Names found nowhere go into `missing`."""
        available = self.deferral.available()
        by_name = {tool.name: tool for tool in available}
        found: list[Tool] = []
        for raw in names.split(","):
            name = raw.strip()
            if not name:
                continue
            tool = by_name.get(name)
            if tool is None:
                same = [t for t in available if getattr(t, "remote_name", None) == name]
                tool = same[0] if len(same) == 1 else None
            if tool is None:
                missing.append(name)
            elif tool not in found:
                found.append(tool)
        return found


def _summary(tool: Tool) -> str:
    return first_line(tool.spec.description or tool.name, 160)
