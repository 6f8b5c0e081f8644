"""`Session.servers`: the workspace's trust and what it gates, with a real stdio MCP server from
`.forge/mcp.yaml` and a real project hooks file — the rule "the trust changed → the hooks load
again and the MCP servers are reconfigured with the settings", written once in the session
(docs/adr/0059 part 4), for a decision, a decision carried over to a new session, and a
changed project file; and the editor's servers trusted for the folder (`forge acp`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import SecretStr

from forge.agent.trust.programs import ProgramSource, WorkspaceProgram
from forge.config.settings import LLMSettings, Settings
from forge.session.build import build_session
from forge.session.core import Session
from tests.agent.hooks.support import command_hook, write_project_hooks
from tests.mcp.conftest import SERVER_SCRIPT, stdio_settings
from tests.support.openai_server import OpenAIServer


def project_files(workspace: Path) -> None:
    """A `.forge/mcp.yaml` server `proj` and a project PreToolUse hook."""
    (workspace / ".forge").mkdir(exist_ok=True)
    entry = {"command": stdio_settings().command, "args": [str(SERVER_SCRIPT), "stdio"]}
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"proj": entry}}))
    write_project_hooks(workspace, {"PreToolUse": [command_hook("true")]})


def settings(server: OpenAIServer) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr("sk-test-1234"), max_retries=0)
    return Settings(llm=llm)


def proj_status(session: Session) -> str:
    mcp = session.servers.mcp
    assert mcp is not None
    return mcp.statuses().get("proj", "")


async def test_a_trust_decision_starts_and_stops_the_workspaces_servers_and_hooks(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    project_files(workspace)
    session = build_session(settings(llm_server), workspace)
    trust, mcp = session.servers.trust, session.servers.mcp
    assert trust is not None and mcp is not None
    try:
        await session.servers.wait(60)
        assert proj_status(session).startswith("not started: .forge/mcp.yaml is not trusted")
        assert "not trusted" in session.reports.hooks()
        sources = await asyncio.to_thread(session.servers.sources)
        assert {source.file for source in sources} >= {".forge/mcp.yaml", ".forge/hooks.json"}

        trust.trust(sources)
        session.servers.trust_changed()  # the one rule: servers and hooks follow the trust
        assert "started proj" in await mcp.reconfigured()
        await session.servers.wait(60)
        assert proj_status(session).startswith("ready")
        assert "not trusted" not in session.reports.hooks()
        assert session.servers.connected

        trust.not_now()
        session.servers.trust_changed()
        assert "stopped proj" in await mcp.reconfigured()
        assert "proj" not in [connection.name for connection in mcp.connections]
        assert "not trusted" in session.reports.hooks()
    finally:
        await session.aclose()


async def test_a_new_session_adopts_the_previous_ones_not_now_and_stops_what_it_started(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    project_files(workspace)
    first = build_session(settings(llm_server), workspace)
    assert first.servers.trust is not None
    first.servers.trust.trust(first.servers.sources())  # stored: the next session starts it
    second = build_session(settings(llm_server), workspace)
    try:
        await second.servers.wait(60)
        assert proj_status(second).startswith("ready")
        first.servers.trust.not_now()  # *Not now* in the first session, then `/clear`
        second.servers.adopt_trust(first.servers)
        assert second.servers.mcp is not None
        assert "stopped proj" in await second.servers.mcp.reconfigured()
        assert "not trusted" in second.reports.hooks()
    finally:
        await first.aclose()
        await second.aclose()


async def test_a_changed_project_file_stops_its_servers_until_trusted_again(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    project_files(workspace)
    session = build_session(settings(llm_server), workspace)
    assert session.servers.trust is not None and session.servers.mcp is not None
    try:
        session.servers.trust.trust(session.servers.sources())
        session.servers.trust_changed()
        await session.servers.mcp.reconfigured()
        await session.servers.wait(60)
        assert proj_status(session).startswith("ready")
        entry = {"command": stdio_settings().command, "args": [str(SERVER_SCRIPT), "stdio", "x"]}
        mcp_yaml = workspace / ".forge" / "mcp.yaml"
        mcp_yaml.write_text(json.dumps({"mcpServers": {"proj": entry}}))
        session.servers.project_file_changed()
        assert "stopped proj" in await session.servers.mcp.reconfigured()
        assert proj_status(session).startswith("not started: .forge/mcp.yaml is not trusted")
    finally:
        await session.aclose()


def test_the_editors_servers_trusted_for_the_folder_keep_the_workspace_files_trusted(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    project_files(workspace)
    editor = ProgramSource("(editor) mcpServers", (WorkspaceProgram("e", "run-e"),), "f1")
    session = build_session(settings(llm_server), workspace)
    try:
        assert not session.servers.permits(editor)
        assert session.servers.trust is not None
        session.servers.trust.trust(session.servers.sources())
        assert session.servers.trust_for_folder(editor) == ""
    finally:
        asyncio.run(session.aclose())
    again = build_session(settings(llm_server), workspace)  # what the store holds now
    try:
        assert again.servers.permits(editor)
        assert all(again.servers.permits(source) for source in again.servers.sources())
    finally:
        asyncio.run(again.aclose())
