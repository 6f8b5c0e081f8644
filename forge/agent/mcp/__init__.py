"""The MCP client: Model Context Protocol servers whose tools join the registry as
`server__tool` (see docs/adr/0025-mcp-client.md)."""

from forge.agent.mcp.connection import McpConnection, ServerState
from forge.agent.mcp.manager import McpServers
from forge.agent.mcp.tool import McpTool, tool_name

__all__ = ["McpConnection", "McpServers", "McpTool", "ServerState", "tool_name"]
