"""Trusted workspace definitions that changed while a session runs — a definition file, or a
workspace script one names (`forge.agent.trust.scripts`) — found, stopped, and started again
once the user trusts them anew (issue 34, docs/adr/0047).

A front end asks the question its own way (`forge acp`: `session/request_permission` before the
next turn); these verbs keep the order that matters: the changed programs stop *before* the
question, so a yes starts the new code and never leaves the old process running under a trust
given to other content.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from forge.agent.trust.gate import TrustStatus
from forge.agent.trust.programs import ProgramSource
from forge.agent.trust.sources import describe_programs, workspace_sources

if TYPE_CHECKING:
    from forge.session.core import Session

RESTART_WAIT = 30.0
"""Seconds a restart waits at most for the servers it starts."""


def changed_definitions(session: Session) -> list[ProgramSource]:
    """The workspace's defining files that were trusted and changed since (their definitions
    or a script they name); empty without a workspace trust."""
    trust = session.servers.trust
    if trust is None:
        return []
    sources = workspace_sources(session.workspace)
    return [source for source in sources if trust.status(source) is TrustStatus.CHANGED]


async def stop_changed(session: Session) -> list[ProgramSource]:
    """Find the changed definitions; when there are any, leave their hooks out and stop their
    MCP servers now (the gate no longer permits them). Returns them, to be asked about."""
    changed = await asyncio.to_thread(changed_definitions, session)
    if changed:
        await apply_trust(session)
    return changed


async def apply_trust(session: Session) -> None:
    """Use the workspace's definitions as the trust says now: hooks loaded again, MCP servers
    stopped or started (waited for, at most `RESTART_WAIT` seconds)."""
    session.servers.trust_changed()  # the one rule: hooks reloaded, servers reconfigured
    mcp = session.servers.mcp
    if mcp is not None:
        try:
            async with asyncio.timeout(RESTART_WAIT):
                await mcp.reconfigured()
        except TimeoutError:
            pass  # a server still starting is told by its own notice


async def watch_definitions(session: Session) -> None:
    """Until cancelled: each time a definition file or a script it names changes, stop what
    changed since it was trusted (`stop_changed`), so a running MCP server does not keep
    running under a trust given to other content; the question waits for the front end."""
    from forge.agent.mcp.project_watch import watch_until_cancelled

    async def changed() -> None:
        await stop_changed(session)

    await watch_until_cancelled(session.workspace, changed)


def changed_lines(sources: list[ProgramSource]) -> list[str]:
    """One line per program of `sources`, with its file: what the question shows."""
    return [f"{source.file}: {line}" for source in sources for line in describe_programs(source)]
