"""A model's write to Forge's own configuration always asks — in every mode but auto, even
when the tool is auto-approved or allow-listed — and says why (docs/adr/0034). The loop
tests run a real agent against the loopback server in a real workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    ToolCallFinished,
)
from forge.agent.protected_paths import PROTECTED_REASON, protected_reason
from forge.agent.tools.registry import default_registry
from forge.config.paths import config_path
from forge.llm.messages import ToolCall
from tests.agent.loop_harness import drive, make_agent, make_provider
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

PROTECTED = [
    ".forge/mcp.yaml",
    ".forge/commands/deploy.md",
    ".agents/skills/x/SKILL.md",
    ".claude/settings.json",
    ".claude/agents/reviewer.md",
    "AGENTS.md",
    "src/AGENTS.md",
    "./.forge/../.forge/mcp.yaml",
    ".FORGE/mcp.yaml",  # case-folding filesystems
]


@pytest.mark.parametrize("path", PROTECTED)
def test_each_protected_path_is_named_with_the_reason(workspace: Path, path: str) -> None:
    reason = protected_reason(workspace, path)
    assert reason is not None and reason.endswith(PROTECTED_REASON)
    assert path in reason


@pytest.mark.parametrize("path", ["src/app.py", "forge.md", "docs/agents.txt", "a/.forgery/x"])
def test_ordinary_files_are_not_protected(workspace: Path, path: str) -> None:
    assert protected_reason(workspace, path) is None


def test_a_symlink_cannot_hide_a_protected_target(workspace: Path) -> None:
    (workspace / ".forge").mkdir()
    os.symlink(workspace / ".forge", workspace / "innocent")
    assert protected_reason(workspace, "innocent/mcp.yaml") is not None


def test_the_user_config_dir_is_protected_when_the_workspace_holds_it(
    isolated_environment: Path,
) -> None:
    # A workspace that is the home directory holds the user's config dir.
    config = config_path().relative_to(isolated_environment)
    reason = protected_reason(isolated_environment, str(config))
    assert reason is not None and "your Forge configuration" in reason


MODES_THAT_ASK = ["ask", "accept-edits"]


@pytest.mark.parametrize("mode", MODES_THAT_ASK)
async def test_a_protected_write_asks_even_when_approved_by_mode_or_auto_approve(
    llm_server: OpenAIServer, workspace: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The user's config dir inside the workspace (as when Forge is opened in the home folder).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(workspace / "cfg"))
    paths = [*PROTECTED[:7], "cfg/forge/config.yaml"]
    calls = [
        Call("write_file", {"path": path, "content": "x"}, id=f"c{index}")
        for index, path in enumerate(paths)
    ]
    llm_server.enqueue(ToolCalls(calls), Text("done"))
    policy = ApprovalPolicy(auto_approve=["write_file", "apply_diff"], mode=mode)
    policy.approve_always("write_file")
    agent = make_agent(make_provider(llm_server), workspace, policy=policy)
    asked: list[ApprovalRequested] = []

    def reject(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)  # distinct reasons: identical errors would trip the breaker
        return ApprovalDecision(ApprovalVerdict.REJECT, f"no {request.call.id}")

    await drive(agent.run_turn("configure yourself"), approve=reject)
    assert [request.call.id for request in asked] == [call.id for call in calls]
    for request in asked:
        assert request.protected.endswith(PROTECTED_REASON)
    assert not (workspace / ".forge").exists() and not (workspace / "AGENTS.md").exists()
    assert not (workspace / "cfg").exists()


async def test_apply_diff_to_agents_md_asks_in_accept_edits(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Be careful.\n")
    blocks = [{"search": "Be careful.", "replace": "Run anything."}]
    llm_server.enqueue(ToolCalls([Call("apply_diff", {"path": "AGENTS.md", "blocks": blocks})]))
    llm_server.enqueue(Text("done"))
    agent = make_agent(
        make_provider(llm_server), workspace, policy=ApprovalPolicy(mode="accept-edits")
    )
    asked: list[ApprovalRequested] = []

    def reject(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(ApprovalVerdict.REJECT, "no")

    await drive(agent.run_turn("edit"), approve=reject)
    assert len(asked) == 1 and "AGENTS.md" in asked[0].protected
    assert (workspace / "AGENTS.md").read_text() == "Be careful.\n"


async def test_always_on_a_protected_write_approves_that_write_only(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": ".forge/a.md", "content": "1"}, id="c1")]),
        ToolCalls([Call("write_file", {"path": ".forge/b.md", "content": "2"}, id="c2")]),
        Text("done"),
    )
    policy = ApprovalPolicy()
    agent = make_agent(make_provider(llm_server), workspace, policy=policy)
    asked: list[str] = []

    def always(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request.call.id)
        return ApprovalDecision(ApprovalVerdict.APPROVE_ALWAYS)

    await drive(agent.run_turn("write"), approve=always)
    assert asked == ["c1", "c2"]
    assert "write_file" not in policy.approved_this_session


async def test_auto_mode_writes_without_asking_and_read_only_refuses(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write = Call("write_file", {"path": ".forge/mcp.yaml", "content": "mcpServers: {}\n"})
    llm_server.enqueue(ToolCalls([write]), Text("done"))
    auto = make_agent(make_provider(llm_server), workspace, policy=ApprovalPolicy(mode="auto"))
    events = await drive(auto.run_turn("write"))
    assert not any(isinstance(event, ApprovalRequested) for event in events)
    assert (workspace / ".forge" / "mcp.yaml").exists()

    llm_server.enqueue(ToolCalls([write]), Text("done"))
    reader = make_agent(
        make_provider(llm_server), workspace, policy=ApprovalPolicy(mode="read-only")
    )
    events = await drive(reader.run_turn("write"))
    (result,) = [event for event in events if isinstance(event, ToolCallFinished)]
    assert result.is_error and result.result.startswith("read-only mode")


def test_the_policy_asks_for_a_protected_write_whatever_allows_the_tool() -> None:
    tool = default_registry().get("write_file")
    call = ToolCall("c", "write_file", '{"path": ".forge/mcp.yaml", "content": ""}')
    why = "x changes what Forge runs"
    for mode in ("ask", "accept-edits"):
        policy = ApprovalPolicy(auto_approve=["write_file"], mode=mode)
        assert policy.decide(call, tool) == "allow"
        assert policy.decide(call, tool, why) == "ask"
    assert ApprovalPolicy(mode="auto").decide(call, tool, why) == "allow"
    assert ApprovalPolicy(mode="read-only").decide(call, tool, why) == "refuse"


def test_the_reason_names_the_file_once(tmp_path: Path) -> None:
    own = protected_reason(tmp_path, "AGENTS.md", user_directories=())
    assert own == f"AGENTS.md is part of Forge's configuration: writing it {PROTECTED_REASON}"
    inside = protected_reason(tmp_path, ".forge/mcp.yaml", user_directories=())
    assert inside == (
        f".forge/mcp.yaml is in .forge/, part of Forge's configuration: writing it "
        f"{PROTECTED_REASON}"
    )
