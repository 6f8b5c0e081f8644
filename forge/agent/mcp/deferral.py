"""Deferred MCP tools: their definitions stay out of the requests until the model loads them
with `tool_search` (docs/adr/0054).

`ToolDeferral` stands between the session's `McpServers` and the tool registry (it is the
registry's tool source). Before a session's first request it decides, once, whether to defer
(`mcp.defer_tools`: "auto" when all MCP definitions pass `mcp.defer_threshold` of the
window, "always", "never") and fixes the system prompt's listing of the deferred servers.
From then on, when deferring, the registry sees `tool_search` and the loaded tools in the
order they were loaded, so a load only appends to the tool list and every byte sent before
stays as it was (the prompt cache's prefix). Loads last for the session: compaction never
sees them, and the session file records them (`record`), so `--continue` and `/rewind` keep
them. A child agent starts with its parent's loads (`for_child`); its own stay its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from forge.agent.history.session_file import TOOL_LOADING_RECORD
from forge.agent.mcp.connection import ServerState
from forge.agent.mcp.manager import SETTLE_MARGIN_SECONDS, McpServers
from forge.agent.mcp.tool_ranking import rank
from forge.agent.mcp.tool_search import TOOL_SEARCH, ToolSearchTool
from forge.agent.tools.base import Tool
from forge.llm.protocols import ToolSpec

DeferMode = Literal["auto", "always", "never"]
MAX_MATCHES = 5
"""Tools one `tool_search` query loads at most."""

CountTools = Callable[[Sequence[ToolSpec]], int]


class ToolDeferral:
    """The MCP tools offered to the model: all of them, or (when deferring) the loaded ones
    behind `tool_search`. A `ToolSource` for `ToolRegistry.add_source`."""

    def __init__(
        self,
        servers: McpServers,
        *,
        mode: DeferMode = "auto",
        threshold: Callable[[], int] = lambda: 0,
        count_tools: CountTools = lambda specs: 0,
        allows: Callable[[str], bool] | None = None,
        record: Callable[[dict[str, Any]], None] | None = None,
        native: Callable[[], bool] = lambda: False,
    ) -> None:
        """The tools of `servers` (those `allows` lets through: a child's definition).
        `threshold()`: the tokens the definitions may take with mode "auto";
        `count_tools`: a token counter's; `record` is told the state to save whenever it
        changes (the session file); `native()`: whether the provider's own tool search is
        used instead of `tool_search` (asked once, at the decision: Anthropic's)."""
        self.servers = servers
        self.mode: DeferMode = mode
        self._threshold = threshold
        self._count_tools = count_tools
        self._allows = allows
        self._record = record
        self._native = native
        self.native = False
        """Whether deferred tools go to the provider marked `defer_loading`, loaded by its own
        tool search (decided with `deferring`; docs/adr/0054)."""
        self.decided = False
        """Whether the session's first request has fixed `deferring` and `listing`."""
        self.settled = False
        """Whether the agent's first request has waited for the servers (`settle`)."""
        self.deferring = False
        self.listing = ""
        """The system prompt's section about the deferred servers ("" when not deferring)."""
        self.loaded: list[str] = []
        """The tools loaded so far, oldest first: the order they are sent in."""
        self.search_tool: Tool = ToolSearchTool(self)

    # --- the decision --------------------------------------------------------------------------
    async def settle(self) -> None:
        """Before the first request: wait for the servers still starting (each within its
        start-up timeout), so the listing and the "auto" count see their tools, and a resumed
        session's loaded tools are there. Nothing to wait for with mode "never" (unless tools
        were loaded) or without servers."""
        deciding = not self.decided and self.mode != "never"
        connections = self.servers.connections
        if (deciding or self.loaded) and connections:
            # Each settles within its own start-up timeout; the margin bounds a stuck one.
            limit = max(c.settings.startup_timeout for c in connections) + SETTLE_MARGIN_SECONDS
            await self.servers.wait_settled(limit)
        self.settled = True

    def decide(self) -> None:
        """Fix, for the session, whether to defer and what the system prompt lists (a no-op
        once decided)."""
        if self.decided:
            return
        available = self.available()
        if self.mode == "never" or not available:
            deferring = self.mode == "always" and bool(self.servers.connections)
        elif self.mode == "always":
            deferring = True
        else:
            deferring = self._count_tools([tool.spec for tool in available]) > self._threshold()
        self.decided = True
        self.deferring = deferring
        self.native = deferring and self._native()
        self.listing = (
            deferred_listing(self.servers, available, native=self.native) if deferring else ""
        )
        if self.servers.connections:  # a session without MCP servers records nothing
            self._save()

    # --- the tool source -----------------------------------------------------------------------
    def available(self) -> list[Tool]:
        """Every MCP tool of the ready servers this agent may use, loaded or not."""
        tools = self.servers.tools()
        if self._allows is None:
            return list(tools)
        return [tool for tool in tools if self._allows(tool.name)]

    def tools(self) -> Sequence[Tool]:
        """What the registry offers: every MCP tool while not deferring (and before the
        decision), else `tool_search` and the loaded tools, in the order they were loaded."""
        available = self.available()
        if not self.deferring or self.native:
            return available  # natively deferred: all sent, `natively_deferred` marks them
        by_name = {tool.name: tool for tool in available}
        return [self.search_tool, *(by_name[name] for name in self.loaded if name in by_name)]

    def natively_deferred(self) -> set[str]:
        """The tools sent marked `defer_loading` (every MCP tool, when deferring natively)."""
        if not (self.deferring and self.native):
            return set()
        return {tool.name for tool in self.available()}

    def deferred(self) -> list[Tool]:
        """The tools not sent: every available one not loaded (none while not deferring)."""
        if not self.deferring:
            return []
        loaded = set(self.loaded)
        return [tool for tool in self.available() if tool.name not in loaded]

    def explain_missing(self, name: str) -> str | None:
        """Why `name` cannot be called now: not loaded yet (load it first), or its server's
        reason (down, starting, removed); None when nothing knows the name."""
        if self.deferring and not self.native and any(t.name == name for t in self.deferred()):
            return (
                f"tool {name} is not loaded: call {TOOL_SEARCH} with query "
                f'"select:{name}" first, then call it'
            )
        if self._allows is not None and not self._allows(name):
            return None
        return self.servers.explain_missing(name)

    # --- loading -------------------------------------------------------------------------------
    def load(self, names: Iterable[str]) -> list[str]:
        """Load the available tools named `names` (unknown ones are skipped); returns the
        names newly loaded, in order. They are appended to what is sent, and recorded."""
        known = {tool.name for tool in self.available()}
        added = []
        for name in names:
            if name in known and name not in self.loaded and name not in added:
                added.append(name)
        if added:
            self.loaded.extend(added)
            self._save()
        return added

    def search(self, query: str, limit: int = MAX_MATCHES) -> list[Tool]:
        """The available tools `query` matches best (at most `limit`, best first)."""
        available = self.available()
        by_name = {tool.name: tool for tool in available}
        ranked = rank(query, [tool.spec for tool in available], limit)
        return [by_name[match.name] for match in ranked]

    # --- the session file ----------------------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        """The state a session file keeps (`restore` reads it back)."""
        return {
            "type": TOOL_LOADING_RECORD,
            "deferring": self.deferring,
            "native": self.native,
            "listing": self.listing,
            "loaded": list(self.loaded),
        }

    def restore(self, record: dict[str, Any]) -> None:
        """The decision and the loads of a resumed session (a record of `to_record`)."""
        loaded = record.get("loaded")
        listing = record.get("listing")
        self.decided = True
        self.deferring = bool(record.get("deferring"))
        self.native = self.deferring and bool(record.get("native"))
        self.listing = listing if isinstance(listing, str) else ""
        self.loaded = [name for name in loaded or [] if isinstance(name, str)]

    def _save(self) -> None:
        if self._record is not None:
            self._record(self.to_record())

    def for_child(self, allows: Callable[[str], bool]) -> ToolDeferral:
        """A child agent's view: the same servers and decision, the tools `allows` lets
        through, starting with this agent's loads; what the child loads stays its own."""
        child = ToolDeferral(
            self.servers,
            mode=self.mode,
            threshold=self._threshold,
            count_tools=self._count_tools,
            allows=allows,
        )
        child.decided = self.decided
        child.settled = self.settled
        # A child allowed none of the MCP tools gets no `tool_search` and no listing.
        child.deferring = self.deferring and bool(child.available())
        child.native = child.deferring and self.native
        child.listing = self.listing if child.deferring else ""
        child.loaded = [name for name in self.loaded if allows(name)]
        return child


NATIVE_SEARCH_NAME = "tool_search_tool_bm25"
"""The name the model calls the Messages API's own tool search by."""


def deferred_listing(servers: McpServers, tools: Sequence[Tool], *, native: bool = False) -> str:
    """The system prompt's section: how to load tools (`native`: with the provider's own tool
    search), and each ready server with its tool count and what it is for."""
    counts: dict[str, int] = {}
    for tool in tools:
        server = getattr(getattr(tool, "connection", None), "name", "")
        counts[server] = counts.get(server, 0) + 1
    how = (
        "MCP tools load on demand: you do not see their definitions until you find them with "
        f"`{NATIVE_SEARCH_NAME}` (a query in plain words, e.g. the task's); a tool it finds can "
        "be called at once. The MCP servers:"
        if native
        else "MCP tools load on demand: their definitions are not sent until you load them "
        f'with `{TOOL_SEARCH}` (a query loads the best matches at once; "select:name,name" '
        "loads exact names). A loaded tool stays available for the rest of the session. The "
        "MCP servers:"
    )
    lines = [how]
    for connection in servers.connections:
        count = counts.get(connection.name, 0)
        if connection.state is not ServerState.READY or not count:
            continue
        about = connection.about or _examples(connection.name, tools)
        noun = "tool" if count == 1 else "tools"
        lines.append(f"- {connection.name} ({count} {noun}): {about}")
    return "\n".join(lines)


def _examples(server: str, tools: Sequence[Tool], limit: int = 4) -> str:
    """ "tools such as a, b, c" for a server that does not say what it is for."""
    names = [
        getattr(tool, "remote_name", tool.name)
        for tool in tools
        if getattr(getattr(tool, "connection", None), "name", "") == server
    ]
    shown = ", ".join(names[:limit])
    return f"tools such as {shown}" + (", …" if len(names) > limit else "")
