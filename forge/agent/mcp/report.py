"""What `/mcp` and `/context` show about the MCP servers, as plain text (no UI code)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forge.agent.mcp.manager import McpServers
from forge.llm.protocols import ToolSpec

CountTools = Callable[[Sequence[ToolSpec]], int]
"""A token counter's `count_tools`."""


def tool_tokens_by_server(servers: McpServers, count_tools: CountTools) -> dict[str, int]:
    """Tokens each server's tool definitions add to every request (0 while it has none)."""
    return {
        name: count_tools([tool.spec for tool in tools]) if tools else 0
        for name, tools in servers.tools_by_server().items()
    }


def servers_report(servers: McpServers, count_tools: CountTools | None = None) -> str:
    """Markdown for `/mcp`: each server with its status (and its tools' tokens when
    `count_tools` is given), then its tools, one line each."""
    statuses = servers.statuses()
    if not statuses:
        return (
            "No MCP servers configured. Add them under `mcp_servers` in config.yaml or in "
            "the project's `.forge/mcp.yaml`."
        )
    tokens = tool_tokens_by_server(servers, count_tools) if count_tools else {}
    by_server = servers.tools_by_server()
    lines = ["**MCP servers**", ""]
    for name, status in statuses.items():
        cost = f", {tokens[name]:,} tokens of definitions" if tokens.get(name) else ""
        lines.append(f"- `{name}`: {status}{cost}")
        for tool in by_server.get(name, []):
            description = tool.spec.description.splitlines()[0] if tool.spec.description else ""
            lines.append(f"  - `{tool.name}`{f' — {description}' if description else ''}")
    return "\n".join(lines)
