"""Starting the editor's MCP servers: at once when trusted, else after asking the editor.

The question goes through `session/request_permission` before the session's first turn
(see `forge.acp.client_mcp` and docs/adr/0044): start them this session, trust them for this
folder (stored), or not now.
"""

from __future__ import annotations

import logging

from acp import update_agent_message_text
from acp.schema import PermissionOption, ToolCallUpdate

from forge.acp.client_mcp import ClientServers
from forge.acp.open_session import OpenSession
from forge.acp.relay import EditorChannel
from forge.session.core import Session

logger = logging.getLogger(__name__)

START_WAIT = 30.0
"""Seconds the editor's servers may take to start before the turn goes on without them."""
TRUST_QUESTION_ID = "forge-trust-mcp-servers"
"""The tool-call id of the question (no model call: the editor needs one to show it)."""
NOT_STARTED = "The editor's MCP servers were not started (not trusted).\n"

_OPTIONS = [
    PermissionOption(option_id="once", name="Start them this session", kind="allow_once"),
    PermissionOption(option_id="always", name="Trust them for this folder", kind="allow_always"),
    PermissionOption(option_id="no", name="Not now", kind="reject_once"),
]


async def decide_servers(opened: OpenSession, channel: EditorChannel) -> None:
    """Ask whether the editor's untrusted servers may start, and start them if so."""
    session = opened.session
    lines = [f"{program.name}: {program.command}" for program in opened.servers.source.programs]
    question = ToolCallUpdate(
        tool_call_id=TRUST_QUESTION_ID,
        title="Start the editor's MCP servers? " + "; ".join(lines),
        kind="execute",
        status="pending",
    )
    answer = await channel.ask(question, _OPTIONS)
    chosen = getattr(answer.outcome, "option_id", "no")
    if chosen not in ("once", "always"):
        await channel.send(update_agent_message_text(NOT_STARTED))
        return
    warning = session.servers.trust_for_folder(opened.servers.source) if chosen == "always" else ""
    if warning:
        await channel.send(update_agent_message_text(warning + "\n"))
    await start_servers(session, opened.servers)


async def start_servers(session: Session, servers: ClientServers) -> None:
    """Start `servers` beside the configured ones; wait until they are ready or failed."""
    try:
        await session.servers.add(servers.settings, START_WAIT)
    except TimeoutError:
        logger.warning("the editor's MCP servers did not start within %s s", START_WAIT)
