"""`Session.servers`: what the workspace and the user define that runs beside the model — the
MCP servers and the hooks — and the workspace's trust that gates them (docs/adr/0034).

The rule "the trust changed → the hooks load again and the MCP servers are reconfigured with
the settings" is written here once (`trust_changed`); every front end's trust decision, a
`/clear` that carries the decision over (`adopt_trust`), and a changed `.forge/mcp.yaml`
(`project_file_changed`) go through it. See docs/adr/0059 part 4.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from forge.agent.mcp import McpServers
from forge.agent.parts import AgentParts
from forge.agent.trust import WorkspaceTrust
from forge.config.settings import McpServerSettings, Settings

if TYPE_CHECKING:
    from forge.agent.mcp.notices import McpServerNotice
    from forge.agent.trust.programs import ProgramSource


class _Owner(Protocol):
    """What the role reads of `forge.session.core.Session` (named here, so the two modules
    do not import each other)."""

    settings: Settings
    parts: AgentParts
    workspace: Path

    def apply_settings(self, new: Settings) -> str: ...


class SessionServers:
    """One session's MCP servers, its hooks' loading and its workspace's trust."""

    def __init__(self, owner: _Owner, mcp: McpServers | None, trust: WorkspaceTrust | None) -> None:
        self._owner = owner
        self.mcp = mcp
        """The session's MCP servers, whose ready tools the registry offers (`/mcp`)."""
        self.trust = trust
        """Whether the workspace's own definitions may run (`/trust`; docs/adr/0034)."""

    # --- the trust and what it gates ------------------------------------------------------------
    def trust_changed(self) -> None:
        """After a trust decision (trust, not now, never, revoke, one carried over): the hooks
        load again and the MCP servers are reconfigured as the trust and the settings say now
        (the workspace's servers start or stop between turns)."""
        self.reload_hooks()
        if self.mcp is not None:
            self.mcp.reconfigure(self._owner.settings.mcp_servers)

    def adopt_trust(self, previous: SessionServers) -> None:
        """Carry `previous`'s decisions of this process over (a new session after `/clear`
        or `/sessions` keeps a *Not now*); the rule applies when there were any."""
        if previous.trust is None or self.trust is None:
            return
        if self.trust.adopt(previous.trust):
            self.trust_changed()

    def project_file_changed(self) -> None:
        """`.forge/mcp.yaml` (or another workspace definition) changed on disk: changed
        definitions stop being trusted first — their servers stop, their hooks are left out —
        until the user answers about them."""
        self.trust_changed()

    async def watch_project_file(self, on_change: Callable[[], Awaitable[None] | None]) -> None:
        """Call `on_change` each time the workspace's `.forge/mcp.yaml` changes on disk, until
        cancelled (a front end runs it as a task and calls `project_file_changed` from it)."""
        from forge.agent.mcp.project_watch import watch_until_cancelled

        await watch_until_cancelled(self._owner.workspace, on_change)

    def sources(self) -> list[ProgramSource]:
        """What the workspace's files define that would run (`.forge/mcp.yaml`, project hooks,
        skills' allowed tools), one source per file, as the files are now (reads them: call
        it in a thread); none without a trust gate."""
        from forge.agent.trust.sources import workspace_sources

        return workspace_sources(self.trust.workspace) if self.trust is not None else []

    def permits(self, source: ProgramSource) -> bool:
        """Whether `source`'s programs may run now (trusted for the run, stored or this
        session); False without a trust gate."""
        return self.trust is not None and self.trust.permits(source)

    def trust_for_folder(self, source: ProgramSource) -> str:
        """Store trust in `source` for the workspace, keeping the workspace files trusted now
        (the store holds one record per folder; `forge acp`'s editor servers). A warning when
        it could not be stored ("" when it was, or without a trust gate)."""
        trust = self.trust
        if trust is None:
            return ""
        kept = [s for s in self.sources() if s.programs and trust.permits(s)]
        return trust.trust([*kept, source])

    def reload_hooks(self) -> None:
        """Load the hooks again, as the settings and the workspace's trust say now."""
        hooks = self._owner.parts.hooks
        if hooks is not None:
            hooks.reload(self._owner.settings, self.trust)

    # --- the MCP servers ------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """Whether any MCP server is configured (ready or not)."""
        return self.mcp is not None and bool(self.mcp.connections)

    def subscribe(self, listener: Callable[[McpServerNotice], None]) -> Callable[[], None]:
        """Tell `listener` the servers' notices so far, then each new one (started, failed,
        crashed, reloaded); returns what unsubscribes it."""
        if self.mcp is None:
            return lambda: None
        return self.mcp.subscribe(listener)

    def start(self) -> None:
        """Start connecting to the servers (once the event loop runs)."""
        if self.mcp is not None:
            self.mcp.start()

    async def wait(self, limit: float | None = None) -> None:
        """Wait until every server is ready or failed, at most `limit` seconds (for `forge
        run`, whose one turn would otherwise start before the tools are listed)."""
        if self.mcp is not None:
            await self.mcp.wait_settled(limit)

    async def add(
        self, servers: Mapping[str, McpServerSettings], limit: float | None = None
    ) -> str:
        """Start `servers` beside the configured ones, for this session only (`forge acp`: the
        editor's servers, once trusted); waits at most `limit` seconds until they are ready or
        failed. Returns what changed."""
        settings = self._owner.settings
        merged = {**settings.mcp_servers, **servers}
        self._owner.apply_settings(settings.model_copy(update={"mcp_servers": merged}))
        if self.mcp is None:
            return ""
        async with asyncio.timeout(limit):
            return await self.mcp.reconfigured()

    async def aclose(self) -> None:
        """Stop the servers (their processes end)."""
        if self.mcp is not None:
            await self.mcp.aclose()
