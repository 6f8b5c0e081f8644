"""`forge acp` as a real subprocess, driven by the ACP SDK's client side, against the
loopback OpenAI-compatible server (tests/support/openai_server.py)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.mcp.conftest import http_server  # noqa: F401 (the real HTTP MCP server fixture)
from tests.support.openai_server import OpenAIServer

REPO_ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-acp-SECRET-0123456789"


@dataclass
class RecordingClient:
    """An editor: records every update, answers permission requests from `answers` (option
    ids, in order; "cancelled" withdraws the question), and records file requests."""

    answers: list[str] = field(default_factory=list)
    updates: list[Any] = field(default_factory=list)
    questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    file_requests: list[str] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    on_update: Callable[[Any], None] | None = None

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.questions.append((tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else "cancelled"
        if answer == "hang":
            await asyncio.Event().wait()
        if answer == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            self.on_update(update)

    async def write_text_file(self, session_id: str, path: str, content: str, **_: Any) -> None:
        self.file_requests.append(f"write {path}")

    async def read_text_file(self, session_id: str, path: str, **_: Any) -> Any:
        self.file_requests.append(f"read {path}")
        raise RuntimeError("the test editor serves no files")

    def of_kind(self, kind: str) -> list[Any]:
        """The updates of one `sessionUpdate` kind, in order."""
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        """The text of every chunk of `kind`, joined."""
        return "".join(u.content.text for u in self.of_kind(kind))

    def clear(self) -> None:
        self.updates.clear()


def forge_environment(server: OpenAIServer, **extra: str) -> dict[str, str]:
    """The test's isolated environment (conftest) pointed at the loopback server."""
    environment = dict(os.environ)
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY=API_KEY,
        FORGE_LLM__MAX_RETRIES="0",
    )
    environment.update(extra)
    return environment


@asynccontextmanager
async def forge_acp(
    client: RecordingClient,
    environment: dict[str, str],
    *args: str,
    workspace: Path,
    initialize: bool = True,
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    """`python -m forge acp ARGS` connected to `client`, initialized (fs capability on, so a
    test can see Forge does not use it)."""
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "forge",
        "acp",
        *args,
        env=environment,
        cwd=workspace,
        transport_kwargs={"shutdown_timeout": 20.0},
    ) as (connection, process):
        if initialize:
            await asyncio.wait_for(
                connection.initialize(
                    protocol_version=PROTOCOL_VERSION,
                    client_capabilities=ClientCapabilities(
                        fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
                    ),
                ),
                30,
            )
        yield connection, process


def prompt_of(text: str) -> list[Any]:
    """A prompt of one text block."""
    return [text_block(text)]
