"""`update_plan` through the real registry: a valid plan comes back as a checklist with the
plan in metadata; an invalid one is an error result saying what to fix; no approval needed."""

from __future__ import annotations

import json
from pathlib import Path

from forge.agent.approvals import ApprovalPolicy
from forge.agent.tools.base import ToolContext
from forge.agent.tools.registry import default_registry
from forge.llm.messages import ToolCall

PLAN = [
    {"step": "Read the parser", "status": "done"},
    {"step": "Fix the bug", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]


def call(arguments: object) -> ToolCall:
    return ToolCall("call_1", "update_plan", json.dumps(arguments))


async def test_a_plan_is_echoed_as_a_checklist_with_the_plan_in_metadata(workspace: Path) -> None:
    registry = default_registry()
    result = await registry.execute(
        call({"plan": PLAN, "explanation": "Found it."}), ToolContext(workspace)
    )
    assert not result.is_error
    assert result.content == (
        "Plan updated (1/3 done):\n[x] Read the parser\n[>] Fix the bug (in progress)\n"
        "[ ] Run the tests"
    )
    assert result.metadata == {"plan": PLAN, "explanation": "Found it."}
    tool = registry.get("update_plan")
    assert tool.describe({"plan": PLAN}) == "update_plan: 1/3 done"
    assert ApprovalPolicy().decide(call({"plan": PLAN}), tool) == "allow"


async def test_an_empty_plan_clears_it(workspace: Path) -> None:
    result = await default_registry().execute(call({"plan": []}), ToolContext(workspace))
    assert not result.is_error and result.content == "Plan cleared."
    assert result.metadata["plan"] == []


async def test_two_steps_in_progress_are_refused_with_what_to_fix(workspace: Path) -> None:
    plan = [{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}]
    result = await default_registry().execute(call({"plan": plan}), ToolContext(workspace))
    assert result.is_error
    assert "at most one step may be in progress" in result.content


async def test_an_unknown_status_is_refused_saying_what_is_allowed(workspace: Path) -> None:
    plan = [{"step": "a", "status": "finished"}]
    result = await default_registry().execute(call({"plan": plan}), ToolContext(workspace))
    assert result.is_error
    assert "must be one of pending, in_progress, done, not 'finished'" in result.content


async def test_codex_style_statuses_are_normalised(workspace: Path) -> None:
    plan = [{"step": "a", "status": "completed"}, {"step": "b", "status": "in progress"}]
    result = await default_registry().execute(call({"plan": plan}), ToolContext(workspace))
    assert not result.is_error, result.content
    assert [s["status"] for s in result.metadata["plan"]] == ["done", "in_progress"]
