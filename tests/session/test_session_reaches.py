"""What the front ends reach through the session's roles instead of the engine (docs/adr/0059
Part 5): `/sandbox`'s lines from `session.reports.sandbox()` (open, then closed) and the
workspace's `.forge/mcp.yaml` watched by `session.servers.watch_project_file`."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import SecretStr

from forge.config.settings import LLMSettings, Settings
from forge.session.build import build_session
from tests.support.openai_server import OpenAIServer


def settings(server: OpenAIServer) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr("sk-test-1234"), max_retries=0)
    return Settings(llm=llm)


async def test_the_sandbox_report_says_the_mechanism_then_that_it_closed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session = build_session(settings(llm_server), workspace)
    try:
        lines = session.reports.sandbox()
        assert lines and lines[0].startswith("Sandbox:")
        assert lines != ["Sandbox: closed."]
    finally:
        await session.aclose()
    assert session.reports.sandbox() == ["Sandbox: closed."]


async def test_the_servers_role_calls_back_when_the_project_file_changes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session = build_session(settings(llm_server), workspace)
    changed = asyncio.Event()
    watcher = asyncio.ensure_future(session.servers.watch_project_file(changed.set))
    try:
        await asyncio.sleep(0.5)  # the watch is registered
        (workspace / ".forge").mkdir()
        (workspace / ".forge" / "mcp.yaml").write_text("mcpServers: {}\n")
        await asyncio.wait_for(changed.wait(), 60)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await session.aclose()
    assert watcher.cancelled()
