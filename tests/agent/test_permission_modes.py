"""Permission modes (docs/adr/0029): the policy's answer for every mode and kind of tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.approvals import ApprovalPolicy
from forge.agent.modes import MODE_ORDER, PermissionMode, is_read_only, next_mode
from forge.agent.tools.base import Tool
from forge.agent.tools.registry import default_registry
from forge.config.settings import LLMSettings, Settings, ToolsSettings
from forge.llm.messages import ToolCall
from forge.session.build import build_session
from tests.support.openai_server import OpenAIServer

REGISTRY = default_registry()


class _McpLike:
    """What the policy reads of an MCP tool: its name, `mutates` and `read_only`."""

    mutates = True

    def __init__(self, name: str, read_only: bool) -> None:
        self.name = name
        self.read_only = read_only


def _decide(policy: ApprovalPolicy, tool: Tool | _McpLike, **arguments: object) -> str:
    call = ToolCall(id="c1", name=tool.name, arguments=json.dumps(arguments))
    return policy.decide(call, tool)  # type: ignore[arg-type]


READ = REGISTRY.get("read_file")
WRITE = REGISTRY.get("write_file")
DIFF = REGISTRY.get("apply_diff")
COMMAND = REGISTRY.get("execute_command")
MCP_WRITER = _McpLike("github__create_issue", read_only=False)
MCP_READER = _McpLike("github__get_issue", read_only=True)

# mode -> expected decision for: read, write, apply_diff, command, MCP writer, MCP reader
EXPECTED = {
    "read-only": ("allow", "refuse", "refuse", "refuse", "refuse", "ask"),
    "ask": ("allow", "ask", "ask", "ask", "ask", "ask"),
    "accept-edits": ("allow", "allow", "allow", "ask", "ask", "ask"),
    "auto": ("allow", "allow", "allow", "allow", "allow", "allow"),
}


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_each_mode_decides_each_kind_of_tool(mode: str) -> None:
    policy = ApprovalPolicy(mode=mode)
    got = tuple(
        _decide(policy, tool, path="a.txt", content="x", command="make")
        for tool in (READ, WRITE, DIFF, COMMAND, MCP_WRITER, MCP_READER)
    )
    assert got == EXPECTED[mode]


def test_ask_mode_keeps_the_allowlist_and_auto_approve() -> None:
    policy = ApprovalPolicy(
        auto_approve=["write_file", "github__*"], command_allowlist=["git status"], mode="ask"
    )
    assert _decide(policy, WRITE, path="a", content="") == "allow"
    assert _decide(policy, MCP_WRITER) == "allow"
    assert _decide(policy, COMMAND, command="git status --short") == "allow"
    assert _decide(policy, COMMAND, command="rm -rf x") == "ask"
    assert _decide(policy, DIFF, path="a", diff="") == "ask"


def test_accept_edits_keeps_the_allowlist_for_commands() -> None:
    policy = ApprovalPolicy(command_allowlist=["pytest"], mode="accept-edits")
    assert _decide(policy, COMMAND, command="pytest -q") == "allow"
    assert _decide(policy, COMMAND, command="make") == "ask"


def test_read_only_refuses_writes_even_when_auto_approved_or_approved_always() -> None:
    policy = ApprovalPolicy(
        auto_approve=["write_file", "github__*"], command_allowlist=["ls"], mode="read-only"
    )
    policy.approve_always("apply_diff")
    assert _decide(policy, WRITE, path="a", content="") == "refuse"
    assert _decide(policy, DIFF, path="a", diff="") == "refuse"
    assert _decide(policy, COMMAND, command="ls") == "refuse"
    assert _decide(policy, MCP_WRITER) == "refuse"
    # A read-only MCP tool then follows the ask rules: here its server is auto-approved.
    assert _decide(policy, MCP_READER) == "allow"


def test_approve_all_is_auto_mode_and_the_mode_can_change_later() -> None:
    policy = ApprovalPolicy(approve_all=True)
    assert policy.mode is PermissionMode.AUTO and policy.approve_all
    policy.mode = PermissionMode.READ_ONLY
    assert not policy.approve_all
    assert _decide(policy, WRITE, path="a", content="") == "refuse"


def test_the_mode_key_cycles_through_every_mode_and_back() -> None:
    seen = [PermissionMode.ASK]
    for _ in MODE_ORDER:
        seen.append(next_mode(seen[-1]))
    assert seen[-1] is PermissionMode.ASK
    assert set(seen) == set(PermissionMode)
    assert [m.value for m in MODE_ORDER] == ["read-only", "ask", "accept-edits", "auto"]


def test_forge_tools_are_read_only_exactly_when_they_change_nothing() -> None:
    assert is_read_only(READ) and is_read_only(REGISTRY.get("search_files"))
    assert not is_read_only(WRITE) and not is_read_only(COMMAND)


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        ApprovalPolicy(mode="yolo")


async def test_a_settings_reload_keeps_the_chosen_mode_unless_tools_mode_changed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm = LLMSettings.model_validate(
        {
            "base_url": llm_server.base_url,
            "api_key": SecretStr("sk-test-modes-0123"),
            "max_retries": 0,
        }
    )
    session = build_session(Settings(llm=llm, tools=ToolsSettings(mode="accept-edits")), workspace)
    try:
        assert session.policy.mode is PermissionMode.ACCEPT_EDITS
        session.policy.mode = PermissionMode.READ_ONLY  # the user pressed the mode key
        session.apply_settings(
            Settings(llm=llm, tools=ToolsSettings(mode="accept-edits", command_timeout=9))
        )
        assert session.policy.mode is PermissionMode.READ_ONLY
        assert session.agent.policy is session.policy
        session.apply_settings(Settings(llm=llm, tools=ToolsSettings(mode="auto")))
        assert session.policy.mode is PermissionMode.AUTO
    finally:
        await session.aclose()
