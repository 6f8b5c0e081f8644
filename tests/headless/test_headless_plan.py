"""`forge run` shows plan updates: a checklist under the call in text mode, the plan as
records in jsonl mode; update_plan needs no approval (a real subprocess, docs/adr/0028)."""

from __future__ import annotations

from pathlib import Path

from forge.context.plan import PLAN_HEADER, PLAN_TOOL
from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

PLAN = [
    {"step": "Read in.txt", "status": "done"},
    {"step": "Write out.txt", "status": "in_progress"},
    {"step": "Check it", "status": "pending"},
]


def script(server: OpenAIServer) -> None:
    server.enqueue(ToolCalls([Call(PLAN_TOOL, {"plan": PLAN})]), Text("All planned."))


def test_text_output_prints_the_checklist_without_asking(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    script(llm_server)
    result = forge_run(llm_server, workspace, "plan the work")  # no --yes: nothing to approve
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()  # progress: stderr (ADR 0015)
    assert result.stdout == "All planned.\n"
    assert "→ update_plan: 1/3 done" in lines
    at = lines.index("  ✓ Plan updated (1/3 done):")
    assert lines[at + 1 : at + 4] == [
        "    [x] Read in.txt",
        "    [>] Write out.txt (in progress)",
        "    [ ] Check it",
    ]
    # The second request carries the plan once, pinned, and not the call that set it.
    second = llm_server.requests[1].messages
    assert [m["role"] for m in second] == ["system", "user", "user"]
    assert second[2]["content"].startswith(PLAN_HEADER)


def test_jsonl_output_carries_the_plan_as_records(
    llm_server: OpenAIServer, workspace: Path, isolated_environment: Path
) -> None:
    script(llm_server)
    result = forge_run(llm_server, workspace, "--output", "jsonl", "plan the work")
    assert result.returncode == 0, result.stderr
    finished = [
        r for r in jsonl(result) if r["type"] == "tool_call_finished" and r["name"] == PLAN_TOOL
    ]
    assert len(finished) == 1 and not finished[0]["is_error"]
    assert finished[0]["metadata"]["plan"] == PLAN
    assert not any(r["type"] == "approval_requested" for r in jsonl(result))
