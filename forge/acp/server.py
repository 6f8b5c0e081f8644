"""`forge acp`: serve the Agent Client Protocol on stdin/stdout until the editor closes it.

stdout carries only the protocol; Forge's log goes to its log file as usual. When the
client goes away (end of stdin), every running turn is cancelled the way Esc cancels one —
its pending calls recorded as cancelled in the session file — and every session is closed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.interfaces import Agent

from forge.acp import errors
from forge.acp.agent import ForgeAcpAgent
from forge.acp.stdio_files import stdio
from forge.acp.transport import CheckedNdjsonTransport
from forge.config.settings import Settings
from forge.config.store import load_settings
from forge.session.parts import secrets_of

logger = logging.getLogger(__name__)

STDIO_LIMIT = 50 * 1024 * 1024
"""Bytes one message may have (an embedded file can be large)."""


def acp_settings() -> Settings:
    """The settings a new session starts with, read again for each session (a key given
    meanwhile counts); an invalid configuration is an error naming the file and the fault."""
    loaded = load_settings()
    secrets_of(loaded.settings, loaded.file_data)  # masked everywhere from now on
    if loaded.error is not None:
        details = "; ".join(loaded.error.details)
        raise errors.invalid_params(f"invalid Forge configuration ({loaded.path}): {details}")
    return loaded.settings


def run_acp(args: argparse.Namespace) -> int:
    """Run `forge acp` (see `forge.cli`); 0 once the client has closed the connection."""
    from forge.session.logs import configure_file_logging

    try:
        configure_file_logging(secrets_of(acp_settings()))
    except Exception as error:  # the sessions will say it again, as ACP errors
        print(f"forge acp: {error}", file=sys.stderr)
    if args.max_turns < 1:
        print("forge acp: --max-turns must be at least 1", file=sys.stderr)
        return 2
    agent = ForgeAcpAgent(
        acp_settings, trust_workspace=bool(args.trust_workspace), max_llm_calls=args.max_turns
    )
    try:
        asyncio.run(serve(agent))
    except KeyboardInterrupt:
        return 130
    return 0


async def serve(agent: ForgeAcpAgent) -> None:
    """Serve `agent` on this process's stdin and stdout until the client closes stdin."""
    reader, writer = await stdio(limit=STDIO_LIMIT)
    transport = CheckedNdjsonTransport(reader, writer)
    # The SDK routes the methods an agent has; Forge has no session/resume or session/close
    # (they answer "method not found"), so it is not the whole `Agent` protocol. The SDK
    # routes session/fork only with its unstable protocol on; turning it on changes nothing
    # else for the methods Forge has (docs/adr/0058, addendum).
    connection = AgentSideConnection(
        cast(Agent, agent), transport, listening=False, use_unstable_protocol=True
    )
    try:
        await connection.listen()
    finally:
        await agent.shutdown()
        await connection.close()
