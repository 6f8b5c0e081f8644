"""`forge acp`: a PreToolUse hook's "ask" reaches the editor's permission request with the
hook's reason and name (issue 35, docs/adr/0048)."""

from __future__ import annotations

from pathlib import Path

from forge.acp.permissions import permission_tool_call
from forge.agent.events import ApprovalRequested
from forge.llm.messages import ToolCall


async def test_the_permission_request_says_which_hook_asked_and_why(tmp_path: Path) -> None:
    call = ToolCall("c1", "execute_command", '{"command": "make deploy"}')
    event = ApprovalRequested(
        call,
        "make deploy",
        "make deploy",
        asked_by="config.yaml: ./guard.sh",
        ask_reason="this deploys",
    )
    update = permission_tool_call(event, tmp_path)
    shown = update.model_dump_json()
    assert "A hook asks: this deploys — config.yaml: ./guard.sh" in shown
    plain = permission_tool_call(ApprovalRequested(call, "make deploy", "make deploy"), tmp_path)
    assert "A hook asks" not in plain.model_dump_json()
