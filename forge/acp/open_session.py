"""One ACP session as `forge acp` holds it: the Forge session and what the editor added."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from acp.schema import StopReason

from forge.acp.client_mcp import ClientServers
from forge.session.core import Session
from forge.session.custom_commands import CustomCommands


@dataclass
class OpenSession:
    """An ACP session: the Forge session, its commands, the editor's MCP servers, the turn."""

    session: Session
    custom: CustomCommands
    servers: ClientServers
    servers_pending: bool
    """The editor's servers wait for the trust question (asked before the first turn)."""
    models: list[str]
    servers_starting: asyncio.Future[None] | None = None
    """The editor's trusted servers being started (the first turn waits for them)."""
    turn: asyncio.Task[StopReason] | None = None
    hooks_started: bool = False
    """SessionStart's hooks ran (before the first turn, their notices relayed with it)."""
    watcher: asyncio.Task[None] | None = None
    """Watches the workspace's definitions and the scripts they name: a trusted one that
    changes is stopped at once, and asked about before the next turn (issue 34)."""
