"""MCP servers the editor passes in `session/new`/`session/load` (`mcpServers`).

They are started like the user's configured servers (added to the session's `mcp_servers`
through `Session.apply_settings`), and they are programs Forge did not define: like a
workspace's `.forge/mcp.yaml` they run only when trusted. Their source for the trust gate is
`ACP_SOURCE` with a fingerprint of their definitions, so a trusted set that changes asks
again. `forge acp --trust-workspace` trusts them for the run; otherwise the editor is asked
with `session/request_permission` before the session's first turn: start them this session,
trust them for this folder (stored in the trust store beside the workspace's other trusted
files: `SessionServers.trust_for_folder`), or not now. See docs/adr/0044.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer

from forge.config.settings import McpServerSettings
from forge.session.trust import ProgramSource, WorkspaceProgram, fingerprint_of

ACP_SOURCE = "(editor) mcpServers"
"""The trust store's name for the servers an editor passes (beside `.forge/mcp.yaml`)."""


@dataclass(frozen=True)
class ClientServers:
    """The editor's servers as Forge's entries, what they run (for trust), and the entries
    Forge cannot start (said to the user)."""

    settings: dict[str, McpServerSettings]
    source: ProgramSource
    skipped: tuple[str, ...] = ()


def client_servers(servers: Sequence[object] | None) -> ClientServers:
    """Forge's entries for the editor's `mcpServers`: stdio and streamable HTTP; SSE and
    ACP-transport servers are skipped with a reason."""
    entries: dict[str, McpServerSettings] = {}
    programs: list[WorkspaceProgram] = []
    definitions: list[dict[str, object]] = []
    skipped: list[str] = []
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            env = {item.name: item.value for item in server.env}
            settings = McpServerSettings(command=server.command, args=list(server.args), env=env)
            what = shlex.join([server.command, *server.args])
        elif isinstance(server, HttpMcpServer):
            headers = {item.name: item.value for item in server.headers}
            settings = McpServerSettings(url=server.url, headers=headers)
            what = f"connect to {server.url}"
        else:
            kind = "SSE" if isinstance(server, SseMcpServer) else type(server).__name__
            skipped.append(f"{getattr(server, 'name', '?')}: {kind} MCP servers are not supported")
            continue
        entries[server.name] = settings
        programs.append(WorkspaceProgram(server.name, what))
        definitions.append({"name": server.name, "what": what})
    source = ProgramSource(ACP_SOURCE, tuple(programs), fingerprint_of(definitions))
    return ClientServers(entries, source, tuple(skipped))
