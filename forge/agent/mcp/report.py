"""What `/mcp` and `/context` show about the MCP servers, as plain text (no UI code)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from forge.agent.mcp.deferral import ToolDeferral
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


def definitions_sent_and_deferred(deferral: ToolDeferral, count_tools: CountTools) -> str:
    """One line for `/context`: the MCP tool definitions sent with every request and those
    deferred behind `tool_search`, in tools and tokens (docs/adr/0054)."""
    sent = [tool.spec for tool in deferral.tools()]
    deferred = [tool.spec for tool in deferral.deferred()]
    line = (
        f"MCP tool definitions sent with every request: {_tools(len(sent))}, "
        f"{count_tools(sent):,} tokens"
    )
    if deferral.deferring:
        line += (
            f" (`tool_search` and {len(deferral.loaded)} loaded); deferred: "
            f"{_tools(len(deferred))}, {count_tools(deferred):,} tokens"
        )
    elif not deferral.decided and deferral.mode != "never":
        line += " (whether to defer them is decided at the first request)"
    return line


def _tools(count: int) -> str:
    return f"{count} tool{'' if count == 1 else 's'}"


def servers_report(
    servers: McpServers,
    count_tools: CountTools | None = None,
    deferral: ToolDeferral | None = None,
) -> str:
    """Markdown for `/mcp`: each server with its status (and its tools' tokens when
    `count_tools` is given), then its tools, one line each; with `deferral` deferring,
    each tool says whether it is loaded (sent) or deferred."""
    statuses = servers.statuses()
    if not statuses:
        return (
            "No MCP servers configured. Add them under `mcp_servers` in config.yaml or in "
            "the project's `.forge/mcp.yaml`."
        )
    tokens = tool_tokens_by_server(servers, count_tools) if count_tools else {}
    by_server = servers.tools_by_server()
    loaded = set(deferral.loaded) if deferral is not None and deferral.deferring else None
    lines = ["**MCP servers**", ""]
    if loaded is not None:
        lines[1:1] = [
            "",
            f"Tools are deferred: {len(loaded)} loaded by `tool_search` (sent with every "
            "request), the others sent only once loaded.",
        ]
    for name, status in statuses.items():
        cost = f", {tokens[name]:,} tokens of definitions" if tokens.get(name) else ""
        lines.append(f"- `{name}`: {status}{cost}")
        for tool in by_server.get(name, []):
            description = tool.spec.description.splitlines()[0] if tool.spec.description else ""
            state = "" if loaded is None else (" (loaded)" if tool.name in loaded else "")
            lines.append(f"  - `{tool.name}`{state}{f' — {description}' if description else ''}")
    return "\n".join(lines)
