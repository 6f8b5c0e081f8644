"""The `mcp_servers` settings: entry shapes, `forge config show` masking literal secrets (a
real subprocess), a save keeping `${VAR}` as written, and `server__*` approvals."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from forge.agent.approvals import ApprovalPolicy
from forge.agent.mcp import McpServers
from forge.config.settings import LLMSettings, McpServerSettings, Settings
from forge.config.store import load_settings, save_settings
from forge.llm.messages import ToolCall
from tests.config.test_commands import _config_file, _forge_config
from tests.mcp.conftest import stdio_settings

CONFIG = """\
mcp_servers:
  github:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env: {GITHUB_TOKEN: "${GH_TOKEN}", LITERAL_KEY: "literal-secret-0a1b2c3d"}
  docs:
    url: https://example.com/mcp
    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    enabled: false
"""


def test_an_entry_is_either_stdio_or_http() -> None:
    assert McpServerSettings(command="npx").transport == "stdio"
    assert McpServerSettings(url="http://127.0.0.1:8000/mcp").transport == "http"
    with pytest.raises(ValidationError, match="either `command`"):
        McpServerSettings()
    with pytest.raises(ValidationError, match="either `command`"):
        McpServerSettings(command="npx", url="http://127.0.0.1:8000/mcp")
    with pytest.raises(ValidationError, match="http"):
        McpServerSettings(url="ftp://example.com")


def test_config_show_masks_literal_values_and_shows_references(
    isolated_environment: Path,
) -> None:
    _config_file(isolated_environment, CONFIG)
    result = _forge_config("show", GH_TOKEN="gh-live-token-123456")
    assert result.returncode == 0, result.stderr
    assert "literal-secret-0a1b2c3d" not in result.stdout
    assert "gh-live-token-123456" not in result.stdout
    assert "${GH_TOKEN}" in result.stdout and "Bearer ${DOCS_TOKEN}" in result.stdout


def test_a_save_keeps_references_as_written(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_TOKEN", "gh-live-token-123456")
    path = _config_file(isolated_environment, CONFIG)
    loaded = load_settings(path)
    assert loaded.error is None
    changed = loaded.settings.model_copy(update={"llm": LLMSettings(model="other-model")})
    save_settings(changed, loaded, {"llm.model"})
    text = path.read_text()
    assert "other-model" in text and "${GH_TOKEN}" in text
    assert "gh-live-token-123456" not in text
    reloaded = load_settings(path).settings
    assert reloaded.mcp_servers == loaded.settings.mcp_servers
    assert reloaded.mcp_servers["docs"].enabled is False


async def test_a_disabled_server_is_listed_but_never_started(tmp_path: Path) -> None:
    log = tmp_path / "starts.log"
    entry = stdio_settings(enabled=False, env={"FORGE_TEST_START_LOG": str(log)})
    servers = McpServers(Settings(mcp_servers={"off": entry}).mcp_servers, tmp_path)
    await servers.wait_settled(10)
    assert servers.statuses() == {"off": "disabled: disabled in the configuration"}
    assert not log.exists()
    await servers.aclose()


class _Mutating:
    mutates = True

    def __init__(self, name: str) -> None:
        self.name = name


@pytest.mark.parametrize(
    ("entries", "tool", "decision"),
    [
        ((), "github__create_issue", "ask"),
        (("github__*",), "github__create_issue", "allow"),
        (("github__create_issue",), "github__create_issue", "allow"),
        (("github__create_issue",), "github__delete_repo", "ask"),
        (("github__*",), "githubx__create_issue", "ask"),
        (("git*",), "github__create_issue", "ask"),
    ],
)
def test_auto_approve_names_a_tool_or_a_whole_server(
    entries: tuple[str, ...], tool: str, decision: str
) -> None:
    policy = ApprovalPolicy(auto_approve=entries)
    call = ToolCall(id="1", name=tool, arguments="{}")
    assert policy.decide(call, _Mutating(tool)) == decision  # type: ignore[arg-type]
