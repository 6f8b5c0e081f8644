"""One MCP server: connect in the background, list its tools, call them, survive its faults.

A connection is held open by one task (the SDK's transports must be entered and left by the
same task) that waits until the connection is closed. Calls come from the agent's task and
are bounded by the server's `timeout`; cancelling the caller (Esc) cancels the call. A server
whose connection dies (a crashed stdio process, a dropped HTTP session) is reconnected once
per session, on the next call.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forge.agent.mcp.naming import server_prefix, tool_name
from forge.agent.mcp.notices import McpServerNotice, NoticeKind, plain_reason
from forge.agent.mcp.results import result_images, result_text
from forge.agent.mcp.sdk import load_sdk
from forge.agent.mcp.servers import expanded
from forge.agent.mcp.stderr_tail import StderrTail
from forge.agent.mcp.tool_listing import list_tools
from forge.agent.tools.base import ToolError, ToolResult
from forge.config.settings import McpServerSettings, SandboxSettings
from forge.text_safety import terminal_safe

if TYPE_CHECKING:
    # The SDK loads when a server first connects, in a thread (forge/agent/mcp/sdk.py).
    import httpx2
    import mcp.types as types
    from mcp import Client

logger = logging.getLogger(__name__)

RESTARTS_PER_SESSION = 1
"""How often a server whose connection died is started again in one session."""

_STDERR_TAIL = 400
"""Characters of a failed stdio server's stderr shown as the reason it failed."""
STDERR_TAIL_BYTES = 64 * 1024
"""The default of `mcp.stderr_tail_bytes`."""
MAX_TOOL_SCHEMA_BYTES = 32 * 1024
"""The default of `mcp.max_tool_schema_bytes`."""


class ServerState(enum.Enum):
    """Where a server is in its life."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"
    CLOSED = "closed"


class McpConnection:
    """The connection to one configured MCP server, and the calls made through it."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        cwd: str | None = None,
        allowed_variables: frozenset[str] | None = None,
    ) -> None:
        """A connection to `settings` named `name`; nothing starts before `start()`.
        A stdio server runs in `cwd` (the workspace) when given. `allowed_variables`: the
        `${VAR}` names its `env`/`headers` may receive (None: any; a workspace-defined
        server gets only `trust.env_allowlist`)."""
        self.name = name
        self.settings = settings
        self.cwd = cwd
        self.allowed_variables = allowed_variables
        self.state = ServerState.STARTING if settings.enabled else ServerState.DISABLED
        self.error = "" if settings.enabled else "disabled in the configuration"
        self.tools: list[types.Tool] = []
        self.about = ""
        """What the server says it is for, on one line (its instructions' or description's
        first line; "" when it says nothing): the deferred tools' listing shows it."""
        self.restarts_left = RESTARTS_PER_SESSION
        self.crashed_out = False
        """The server crashed again after its restart: down for the rest of the session."""
        self.sandbox = SandboxSettings()
        """`tools.sandbox`: what confines this server when its entry says `sandbox: true`."""
        self.on_notice: Callable[[McpServerNotice], None] | None = None
        """Told when the server fails to start, crashes, or goes down (set by `McpServers`)."""
        self._run = 0
        """Which start of the server this is (a crash is counted once per run)."""
        self._crash_counted = -1
        self._client: Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._stderr: StderrTail | None = None
        self.stderr_tail_bytes = STDERR_TAIL_BYTES
        """Bytes of the server's stderr kept (`mcp.stderr_tail_bytes`)."""
        self.max_tool_schema_bytes = MAX_TOOL_SCHEMA_BYTES
        """Bytes of one tool's definition above which it is left out
        (`mcp.max_tool_schema_bytes`)."""
        self._lost = False
        if not settings.enabled:
            self._settled.set()

    @property
    def status(self) -> str:
        """One line for people: "starting", "ready (N tools)", "failed: reason"."""
        if self.state is ServerState.READY:
            if self._lost:
                return f"stopped: {self.error} (restarts on the next call)"
            count = len(self.tools)
            return f"ready ({count} tool{'s' if count != 1 else ''})"
        if self.state in (ServerState.FAILED, ServerState.DISABLED):
            return f"{self.state.value}: {self.error}"
        return self.state.value

    def start(self) -> None:
        """Start connecting in the background (needs a running event loop)."""
        if self.state is not ServerState.STARTING or self._holder is not None:
            return
        self._stop = asyncio.Event()
        self._settled = asyncio.Event()
        self._run += 1
        self._holder = asyncio.get_running_loop().create_task(
            self._hold(self._run), name=f"mcp server {self.name}"
        )

    async def wait_settled(self, limit: float | None = None) -> None:
        """Wait until the server is ready or has failed (at most `limit` seconds)."""
        try:
            async with asyncio.timeout(limit):
                await self._settled.wait()
        except TimeoutError:
            pass

    async def _hold(self, run: int) -> None:
        """Connect, list the tools, then keep the connection open until `close`."""
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(self.settings.startup_timeout):
                    await load_sdk()
                    client = await stack.enter_async_context(await self._make_client(stack))
                    listing = await list_tools(client, self.max_tool_schema_bytes)
                listed = listing.tools
                self._client = client
                self.tools = listed
                self.about = _about(client)
                self.state = ServerState.READY
                self.error = ""
                self._lost = False
                self._settled.set()
                logger.info("MCP server %s ready with %d tools", self.name, len(listed))
                if listing.left_out:
                    self._tell("tools_left_out", "; ".join(listing.left_out))
                await self._stop.wait()
        except asyncio.CancelledError:
            raise
        except (Exception, BaseExceptionGroup) as error:  # whatever a server does is its fault
            reason = self._reason(error)
            logger.warning("MCP server %s: %s", self.name, reason)
            if self._stop.is_set():
                pass  # closed on purpose (a reload, the end of the session)
            elif self.state is ServerState.READY:
                self._crashed(run, reason)  # it died while idle
            else:
                self.state = ServerState.FAILED
                self.error = reason
                self._lost = False
                self._tell("start_failed", reason)
        finally:
            self._client = None
            self._settled.set()

    async def _make_client(self, stack: AsyncExitStack) -> Client:
        from mcp import Client, StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        settings = self.settings
        if settings.transport == "stdio":
            self._close_stderr()  # the last run's; kept until now to say why it ended
            # Closed by the next start or `aclose`: it holds why the last run ended.
            self._stderr = StderrTail(self.stderr_tail_bytes)
            command, args = settings.command, list(settings.args)
            if settings.sandbox:  # opted in (docs/adr/0053)
                from forge.agent.sandbox.sandbox import confined_server_command

                command, args = confined_server_command(
                    command, args, Path(self.cwd or "."), self.sandbox
                )
            parameters = StdioServerParameters(
                command=command,
                args=args,
                env=expanded(settings.env, self.allowed_variables) or None,
                cwd=self.cwd,
            )
            return Client(stdio_client(parameters, errlog=self._stderr.writer))
        http: httpx2.AsyncClient = await stack.enter_async_context(
            create_mcp_http_client(headers=expanded(settings.headers, self.allowed_variables))
        )
        return Client(streamable_http_client(settings.url, http_client=http))

    def _reason(self, error: BaseException) -> str:
        if isinstance(error, TimeoutError):
            reason = f"no answer within {self.settings.startup_timeout:g} s"
        else:
            reason = plain_reason(_innermost(error), self.settings, _describe(error))
        stderr = self._stderr_tail()
        return f"{reason} (stderr: {stderr})" if stderr else reason

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        text = self._stderr.text()
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines[-3:])[-_STDERR_TAIL:]

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call `tool` with `arguments`. Every fault becomes a `ToolError` the model can read;
        cancellation propagates (the call is abandoned and the server told)."""
        client = await self._usable_client(tool)
        run = self._run
        try:
            async with asyncio.timeout(self.settings.timeout):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            raise ToolError(
                f"MCP server {self.name!r}: {tool} gave no answer within "
                f"{self.settings.timeout:g} s and was cancelled"
            ) from None
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as error:
            if (self._holder is not None and self._holder.done()) or _connection_lost(error):
                await self._connection_died(run, _describe(error))
                raise ToolError(
                    f"MCP server {self.name!r} stopped during {tool}: {self.error}"
                    + (
                        " (it is down for the rest of the session: it crashed twice)"
                        if self.crashed_out
                        else " (it will be restarted on the next call)"
                    )
                ) from None
            raise ToolError(
                f"MCP server {self.name!r}: {tool} failed: {_describe(error)}"
            ) from None
        from mcp.types import CallToolResult  # loaded: `client` is the SDK's

        if not isinstance(result, CallToolResult):
            raise ToolError(f"MCP server {self.name!r}: {tool} returned no tool result")
        images = (
            await asyncio.to_thread(result_images, result, tool_name(self.name, tool))
            if any(getattr(block, "type", "") == "image" for block in result.content)
            else {}
        )
        text = result_text(result, images.keys())
        return ToolResult(
            text,
            is_error=bool(result.is_error),
            metadata={"mcp_server": self.name},
            images=tuple(images.values()),
        )

    async def _usable_client(self, tool: str) -> Client:
        if self.state is ServerState.STARTING:
            await self.wait_settled(self.settings.startup_timeout)
        if self.state is ServerState.FAILED:
            raise ToolError(self.unavailable_message(tool))
        if self._lost or (self.state is ServerState.READY and self._client is None):
            if self.restarts_left <= 0:
                raise ToolError(self.unavailable_message(tool))
            self.restarts_left -= 1
            await self._shut()
            self.state = ServerState.STARTING
            logger.info("restarting MCP server %s", self.name)
            self.start()
            await self.wait_settled()
        if self.state is not ServerState.READY or self._client is None:
            raise ToolError(f"MCP server {self.name!r} is not available: {self.status}")
        return self._client

    async def _connection_died(self, run: int, reason: str) -> None:
        """The server is gone: close what is left of the connection; the next call restarts
        it (once per session)."""
        await self._shut()
        stderr = self._stderr_tail()
        self._crashed(run, f"{reason} (stderr: {stderr})" if stderr else reason)

    def _crashed(self, run: int, reason: str) -> None:
        """Run `run` of the server died: it is restarted on the next call while the budget
        lasts, else it is down for the session. Told once per run."""
        if self._crash_counted == run:
            return
        self._crash_counted = run
        self.error = reason
        if self.restarts_left > 0:
            self._lost = True  # tools stay listed; the next call reconnects
            self._tell("crashed", reason)
        else:
            self._lost = False
            self.state = ServerState.FAILED
            self.crashed_out = True
            self._tell("down", reason)

    def _tell(self, kind: NoticeKind, reason: str) -> None:
        if self.on_notice is not None:
            self.on_notice(McpServerNotice(self.name, kind, reason))

    def unavailable_reason(self) -> str | None:
        """Why this server's tools cannot be called now, as the end of a sentence starting
        "MCP server NAME" (None when they can be, or the server is still starting)."""
        if self.state is ServerState.FAILED:
            if self.crashed_out:
                return "is down (crashed twice this session)"
            return f"failed to start ({self.error})"
        if self.state is ServerState.DISABLED:
            return "is disabled in the configuration (`enabled: false`)"
        if self.state is ServerState.CLOSED:
            return "was stopped"
        return None

    def unavailable_message(self, tool: str) -> str:
        """The error a call of `tool` (the server's name for it, or Forge's `server__tool`)
        gets while the server cannot take calls."""
        reason = self.unavailable_reason() or f"is not available: {self.status}"
        full = tool if tool.startswith(server_prefix(self.name)) else tool_name(self.name, tool)
        return f"MCP server {self.name} {reason}; tool {full} is unavailable"

    async def _shut(self) -> None:
        holder, self._holder = self._holder, None
        self._stop.set()
        if holder is not None:
            try:
                await asyncio.shield(holder)
            except (asyncio.CancelledError, Exception):
                logger.debug("MCP server %s closed with an error", self.name, exc_info=True)
        self._client = None

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def aclose(self) -> None:
        """Close the connection (a stdio server's process is stopped, then killed)."""
        await self._shut()
        self._close_stderr()
        if self.state is not ServerState.DISABLED:
            self.state = ServerState.CLOSED
        self._settled.set()


def _connection_lost(error: BaseException) -> bool:
    return "connection closed" in str(error).lower()


def _innermost(error: BaseException) -> BaseException:
    """The first real exception inside (nested) exception groups."""
    while isinstance(error, BaseExceptionGroup):
        inner = [item for item in error.exceptions if not isinstance(item, asyncio.CancelledError)]
        if not inner:
            break
        error = inner[0]
    return error


def _describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        inner = [item for item in error.exceptions if not isinstance(item, asyncio.CancelledError)]
        if inner:
            return _describe(inner[0])
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


ABOUT_LIMIT = 160
"""Characters of a server's one-line description."""


def _about(client: Client) -> str:
    """The first line of the server's instructions, else of its description or title."""
    info = client.server_info
    for text in (
        client.instructions,
        getattr(info, "description", None),
        getattr(info, "title", None),
    ):
        if isinstance(text, str) and text.strip():
            line = terminal_safe(text.strip()).splitlines()[0].strip()
            return line if len(line) <= ABOUT_LIMIT else line[: ABOUT_LIMIT - 1] + "…"
    return ""
