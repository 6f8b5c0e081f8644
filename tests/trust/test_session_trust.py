"""The session's side of workspace trust with a real stdio MCP server from `.forge/mcp.yaml`:
an untrusted workspace's server is listed as not started and a call to its tool says why;
trusting and reconfiguring starts it; a changed `trust.env_allowlist` restarts it with the
newly allowed variable, while the user's own config still expands every `${VAR}`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.tools.base import ToolError
from forge.agent.trust.sources import workspace_sources
from forge.config.secrets import REDACTED
from forge.config.settings import LLMSettings, Settings, TrustSettings
from forge.session.build import build_session
from tests.mcp.conftest import SERVER_SCRIPT, stdio_settings
from tests.support.openai_server import OpenAIServer

SECRET = "project-token-0a1b2c3d"


def project_server(workspace: Path) -> None:
    (workspace / ".forge").mkdir()
    entry = {
        "command": stdio_settings().command,
        "args": [str(SERVER_SCRIPT), "stdio"],
        "env": {"TOKEN": "${PROJECT_TOKEN}"},
    }
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"proj": entry}}))


def settings(server: OpenAIServer, allowlist: list[str]) -> Settings:
    llm = LLMSettings(base_url=server.base_url, api_key=SecretStr("sk-test-1234"), max_retries=0)
    mine = stdio_settings(env={"TOKEN": "${PROJECT_TOKEN}"})
    return Settings(
        llm=llm, trust=TrustSettings(env_allowlist=allowlist), mcp_servers={"mine": mine}
    )


async def test_trust_and_the_allowlist_apply_to_a_running_session(
    llm_server: OpenAIServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROJECT_TOKEN", SECRET)
    project_server(workspace)
    session = build_session(settings(llm_server, []), workspace)
    mcp, trust = session.servers.mcp, session.servers.trust
    assert mcp is not None and trust is not None
    try:
        await session.servers.wait(60)
        assert [c.name for c in mcp.connections] == ["mine"]
        assert mcp.statuses()["proj"].startswith("not started: .forge/mcp.yaml is not trusted")
        with pytest.raises(ToolError, match="not trusted"):
            session.registry.get("proj__read_env")
        # The user's own server expands every variable (masked for the model as a secret).
        mine = mcp.connections[0]
        assert (await mine.call("read_env", {"name": "TOKEN"})).content == REDACTED

        trust.trust(workspace_sources(workspace))
        mcp.reconfigure(session.settings.mcp_servers)
        assert "started proj" in await mcp.reconfigured()
        await session.servers.wait(60)
        proj = next(c for c in mcp.connections if c.name == "proj")
        assert (await proj.call("read_env", {"name": "TOKEN"})).content == ""

        session.apply_settings(settings(llm_server, ["PROJECT_TOKEN"]))
        assert "restarted proj" in await mcp.reconfigured()
        await session.servers.wait(60)
        proj = next(c for c in mcp.connections if c.name == "proj")
        assert (await proj.call("read_env", {"name": "TOKEN"})).content == REDACTED
    finally:
        await session.aclose()
