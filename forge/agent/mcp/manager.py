"""All of a session's MCP servers: started in the background, their tools offered to the
registry as they become ready, reconfigured between turns when the settings change, closed
with the session."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from forge.agent.mcp.connection import McpConnection, ServerState
from forge.agent.mcp.naming import server_prefix
from forge.agent.mcp.notices import McpServerNotice
from forge.agent.mcp.servers import ServerEntry, configured_servers, secret_values
from forge.agent.mcp.tool import McpTool
from forge.agent.tools.base import Tool
from forge.agent.trust import WorkspaceTrust
from forge.config.secrets import KNOWN_SECRETS
from forge.config.settings import McpServerSettings, McpSettings, SandboxSettings

logger = logging.getLogger(__name__)

NoticeListener = Callable[[McpServerNotice], None]

TURN_POLL_SECONDS = 0.1
"""How often a deferred reconfiguration checks whether the turn has ended."""
SETTLE_MARGIN_SECONDS = 5.0
"""Beyond a server's own start-up timeout, how long a reload waits for it to settle."""
LAUNCHED = frozenset({"started", "restarted"})
"""The reload changes that start a server process (or connection)."""


class McpServers:
    """The session's MCP servers. A tool source for `ToolRegistry.add_source`: `tools()`
    is what the ready servers offer right now."""

    def __init__(
        self,
        user: Mapping[str, McpServerSettings],
        workspace: Path,
        trust: WorkspaceTrust | None = None,
        limits: McpSettings | None = None,
        sandbox: SandboxSettings | None = None,
    ) -> None:
        """The servers of `user` settings and the workspace's `.forge/mcp.yaml` (only when
        `trust` permits it; default: the stored decision for `workspace`); their `env` and
        `headers` values (expanded) become known secrets. `limits` bounds what they send (the
        defaults when None). `sandbox`: the sandbox a server with `sandbox: true` runs in."""
        self.workspace = workspace
        self.sandbox = sandbox if sandbox is not None else SandboxSettings()
        self.trust = trust or WorkspaceTrust(workspace)
        """Whether the workspace's own server definitions may run (docs/adr/0034)."""
        self.limits = limits if limits is not None else McpSettings()
        self._reported_collisions: set[tuple[str, str]] = set()
        self.connections: list[McpConnection] = []
        self.problems: dict[str, str] = {}
        """Entries that could not be used, by name, with why."""
        self.untrusted: set[str] = set()
        """Entries of `problems` not started because their workspace file is not trusted."""
        self.removed: set[str] = set()
        """Servers removed from the configuration this session (their tools' calls say so)."""
        self.in_turn: Callable[[], bool] = lambda: False
        """Whether a turn is running (set by the session): reconfiguring waits until not."""
        self._listeners: list[NoticeListener] = []
        self.told: list[McpServerNotice] = []
        """Every notice of the session so far, oldest first."""
        self._start_told_by_reload: set[str] = set()
        """Servers a reload started: their start failure goes in the reload's one notice."""
        self._pending: Mapping[str, McpServerSettings] | None = None
        self._applying: asyncio.Task[str] | None = None
        self._use(configured_servers(user, workspace, self.trust))
        self._started = False
        self._cache: tuple[tuple[int, ...], list[Tool]] = ((), [])

    def _use(self, entries: list[ServerEntry]) -> None:
        self.problems = {}
        connections = []
        self.untrusted = set()
        for entry in entries:
            if entry.settings is None:
                self.problems[entry.name] = entry.problem
                if entry.untrusted:
                    self.untrusted.add(entry.name)
            else:
                connections.append(self._connection(entry))
        self.connections = connections
        # Every artefact writer (session file, log, `forge run` output) masks these from now on.
        KNOWN_SECRETS.add(self.secrets())

    def _connection(self, entry: ServerEntry) -> McpConnection:
        assert entry.settings is not None
        connection = McpConnection(
            entry.name, entry.settings, str(self.workspace), entry.allowed_variables
        )
        connection.sandbox = self.sandbox
        connection.on_notice = self._tell
        connection.max_tool_schema_bytes = self.limits.max_tool_schema_bytes
        connection.stderr_tail_bytes = self.limits.stderr_tail_bytes
        return connection

    # --- notices -----------------------------------------------------------------------------
    def subscribe(self, listener: NoticeListener) -> Callable[[], None]:
        """Tell `listener` the notices told so far (a server may fail before a client is
        listening), then every notice from now on; returns what unsubscribes it."""
        for notice in self.told:
            listener(notice)
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _tell(self, notice: McpServerNotice) -> None:
        if notice.kind == "start_failed" and notice.server in self._start_told_by_reload:
            return  # the reload's notice tells it, once, with the other servers' states
        logger.info("MCP notice: %s", notice.text(""))
        self.told.append(notice)
        for listener in list(self._listeners):
            try:
                listener(notice)
            except Exception:  # a client's display bug must not break a server's lifecycle
                logger.exception("an MCP notice listener failed")

    def secrets(self) -> list[str]:
        """The expanded `env`/`headers` values of every server (to redact)."""
        return sorted(
            {
                value
                for c in self.connections
                for value in secret_values(c.settings, c.allowed_variables)
            }
        )

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start every enabled server in the background; needs a running event loop (a
        no-op without one, and after the first call)."""
        if self._started:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._started = True
        for connection in self.connections:
            connection.start()

    async def wait_settled(self, limit: float | None = None) -> None:
        """Start the servers if needed; wait until each is ready or failed (`limit` seconds)."""
        self.start()
        await asyncio.gather(*(c.wait_settled(limit) for c in self.connections))

    def reconfigure(self, user: Mapping[str, McpServerSettings]) -> None:
        """Use the user's servers `user` (and the project file as it is now) from the end of
        the running turn on, or now between turns: added servers start, removed and disabled
        ones stop, changed ones restart. When something changed, tells one `reloaded` notice
        once the servers it started are ready or failed, naming each server once with its
        real state (a start failure is in it, not in a notice of its own)."""
        self._pending = dict(user)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._use(configured_servers(user, self.workspace, self.trust))
            self._pending = None
            return
        if self._applying is None or self._applying.done():
            self._applying = asyncio.get_running_loop().create_task(
                self._apply_when_idle(), name="mcp reconfigure"
            )

    async def reconfigured(self) -> str:
        """Wait for a reconfiguration in progress; returns what it changed ("" if nothing)."""
        if self._applying is None:
            return ""
        return await asyncio.shield(self._applying)

    async def _apply_when_idle(self) -> str:
        # Tools are not yanked from under a running turn. The turn's end is not an event
        # this object can await (the loop owns it), so it is polled.
        while self.in_turn():  # noqa: ASYNC110
            await asyncio.sleep(TURN_POLL_SECONDS)
        changes: dict[str, str] = {}
        while self._pending is not None:
            user, self._pending = self._pending, None
            changes.update(await self._apply(configured_servers(user, self.workspace, self.trust)))
            await self._settle_started(changes)
        description, failed = describe_reload(changes, self.connections)
        self._start_told_by_reload.clear()
        if description:
            self._tell(McpServerNotice("", "reloaded", description, failed=failed))
        return description

    async def _settle_started(self, changes: Mapping[str, str]) -> None:
        """Wait until every server the reload started is ready or failed (each within its
        own start-up timeout), so the notice can say which."""
        launched = [c for c in self.connections if changes.get(c.name) in LAUNCHED]
        if not self._started:
            # Nothing runs yet (they start with the first use): each is told when it starts.
            self._start_told_by_reload.clear()
            return
        await asyncio.gather(
            *(c.wait_settled(c.settings.startup_timeout + SETTLE_MARGIN_SECONDS) for c in launched)
        )
        for connection in launched:
            if connection.state is ServerState.STARTING:
                # Not settled in time: a later failure is told on its own.
                self._start_told_by_reload.discard(connection.name)

    async def _apply(self, entries: list[ServerEntry]) -> dict[str, str]:
        """Move to `entries`: close what went or changed, start what came or changed.
        Returns what happened to each server that changed: "started", "stopped" or
        "restarted"."""
        old = {c.name: c for c in self.connections}
        running = {name for name, connection in old.items() if _running(connection)}
        wanted = {e.name: e for e in entries}
        keep: dict[str, McpConnection] = {}
        closing: list[McpConnection] = []
        started: list[str] = []
        stopped: list[str] = []
        restarted: list[str] = []
        for name, connection in old.items():
            entry = wanted.get(name)
            if entry is not None and _same(entry, connection):
                keep[name] = connection
                continue
            closing.append(connection)
            went = entry is None or entry.settings is None or not entry.settings.enabled
            if went and name in running:
                stopped.append(name)
        await asyncio.gather(*(c.aclose() for c in closing), return_exceptions=True)
        connections: list[McpConnection] = []
        for entry in entries:
            if entry.name in keep:
                connections.append(keep[entry.name])
                continue
            if entry.settings is None:
                continue
            connection = self._connection(entry)
            connections.append(connection)
            if not entry.settings.enabled:
                continue
            self._start_told_by_reload.add(entry.name)
            if entry.name in running:
                restarted.append(entry.name)
            else:
                started.append(entry.name)
        self.removed |= set(old) - set(wanted)
        self.removed -= set(wanted)
        self.problems = {e.name: e.problem for e in entries if e.settings is None}
        self.untrusted = {e.name for e in entries if e.untrusted}
        self.connections = connections
        KNOWN_SECRETS.add(self.secrets())
        if self._started:
            for connection in connections:
                connection.start()
        changes: dict[str, str] = {}
        for label, names in (("started", started), ("stopped", stopped), ("restarted", restarted)):
            changes.update(dict.fromkeys(names, label))
        return changes

    # --- tools -------------------------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        """The tools of the servers that are ready (started here if not yet started)."""
        self.start()
        ready = [c for c in self.connections if c.state is ServerState.READY]
        key = tuple(id(tool) for c in ready for tool in c.tools)
        if key != self._cache[0]:
            self._cache = (key, self._without_collisions(ready))
        return self._cache[1]

    def _without_collisions(self, ready: list[McpConnection]) -> list[Tool]:
        """Every ready tool once by its Forge name: when two come out the same (names are
        cut to 64 characters and unsafe characters replaced), the first listed wins and each
        other is left out with a notice, once."""
        tools: list[Tool] = []
        taken: dict[str, McpTool] = {}
        for connection in ready:
            collided: list[str] = []
            for listed in connection.tools:
                tool = McpTool(connection, listed)
                first = taken.get(tool.name)
                if first is None:
                    taken[tool.name] = tool
                    tools.append(tool)
                    continue
                report = (connection.name, listed.name)
                if report not in self._reported_collisions:
                    self._reported_collisions.add(report)
                    owner = first.connection.name
                    collided.append(
                        f"{listed.name}: its name {tool.name} is taken by {owner}'s "
                        f"{first.remote_name}"
                    )
            if collided:
                self._tell(McpServerNotice(connection.name, "tools_left_out", "; ".join(collided)))
        return tools

    def explain_missing(self, name: str) -> str | None:
        """Why the tool `name` is not offered, when it belongs to a server that is down,
        failed, disabled, starting or removed (None when no server claims it): the model
        gets this instead of "unknown tool"."""
        for connection in self.connections:
            if name.startswith(server_prefix(connection.name)):
                if connection.unavailable_reason() is not None:
                    return connection.unavailable_message(name)
                if connection.state is ServerState.STARTING:
                    return (
                        f"MCP server {connection.name} is still starting; tool {name} is not "
                        "available yet"
                    )
        for server, problem in self.problems.items():
            if name.startswith(server_prefix(server)):
                return f"MCP server {server} cannot be used ({problem}); tool {name} is unavailable"
        for server in self.removed:
            if name.startswith(server_prefix(server)):
                return (
                    f"MCP server {server} was removed from the configuration; tool {name} is "
                    "unavailable"
                )
        return None

    def tools_by_server(self) -> dict[str, list[Tool]]:
        """The ready tools grouped by server name."""
        grouped: dict[str, list[Tool]] = {c.name: [] for c in self.connections}
        for tool in self.tools():
            if isinstance(tool, McpTool):
                grouped[tool.connection.name].append(tool)
        return grouped

    def statuses(self) -> dict[str, str]:
        """Each server's status line by name, unusable entries included."""
        lines = {c.name: c.status for c in self.connections}
        lines.update(
            {
                name: problem if name in self.untrusted else f"failed: {problem}"
                for name, problem in self.problems.items()
            }
        )
        return lines

    async def aclose(self) -> None:
        """Close every connection (stdio server processes are stopped)."""
        if self._applying is not None and not self._applying.done():
            self._applying.cancel()
            await asyncio.gather(self._applying, return_exceptions=True)
        await asyncio.gather(*(c.aclose() for c in self.connections), return_exceptions=True)


def _same(entry: ServerEntry, connection: McpConnection) -> bool:
    """Whether `connection` already is what `entry` configures (nothing to restart)."""
    return (
        entry.settings == connection.settings
        and entry.allowed_variables == connection.allowed_variables
    )


def describe_reload(
    changes: Mapping[str, str], connections: Sequence[McpConnection]
) -> tuple[str, bool]:
    """What a reload did, each server named once with its real state: "started a, b;
    stopped c; restarted d; e failed to start: why; f still starting". Returns the text
    ("" when nothing changed) and whether a server failed."""
    state = {c.name: c for c in connections}
    groups: dict[str, list[str]] = {"started": [], "stopped": [], "restarted": []}
    troubles: list[str] = []
    failed = False
    for name in sorted(changes):
        label = changes[name]
        connection = state.get(name)
        if label in LAUNCHED and connection is not None:
            if connection.state is ServerState.FAILED:
                verb = "start" if label == "started" else "restart"
                troubles.append(f"{name} failed to {verb}: {connection.error}")
                failed = True
                continue
            if connection.state is ServerState.STARTING:
                troubles.append(f"{name} still starting")
                continue
        groups[label].append(name)
    parts = [f"{label} {', '.join(names)}" for label, names in groups.items() if names]
    return "; ".join(parts + troubles), failed


def _running(connection: McpConnection) -> bool:
    """Whether the server is up or coming up (a failed or disabled one is not)."""
    return connection.state in (ServerState.STARTING, ServerState.READY)
