"""Hooks apply to a child's tool calls as to the parent's, and a child's end runs
SubagentStop, not Stop (issues 27 and 29; docs/adr/0043, 0045)."""

from __future__ import annotations

from pathlib import Path

from forge.agent.events import SubagentEvent, ToolCallFinished
from tests.agent.hooks.support import command_hook
from tests.agent.hooks.turns_support import drive, hooked_session, recorded, recorder
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

GUARD = "echo 'children may not read secrets.txt' >&2; exit 2"


async def test_a_childs_calls_run_the_parents_hooks_and_its_end_runs_subagent_stop(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "hooks.log"
    (workspace / "secrets.txt").write_text("hunter2\n")
    llm_server.enqueue(
        ToolCalls([Call("task", {"agent": "explore", "prompt": "read secrets.txt"})]),
        ToolCalls([Call("read_file", {"path": "secrets.txt"})]),  # the child
        Text("I could not read it."),  # the child's report
        Text("The child could not read it."),
    )
    session = hooked_session(
        llm_server,
        workspace,
        {
            "PreToolUse": [command_hook(GUARD, "Read")],
            "SubagentStop": [command_hook(recorder(log))],
            "Stop": [command_hook(recorder(log))],
        },
    )
    try:
        events = await drive(session.run_turn("what is in secrets.txt?"))
    finally:
        await session.aclose()
    child_results = [
        e.event
        for e in events
        if isinstance(e, SubagentEvent) and isinstance(e.event, ToolCallFinished)
    ]
    [read] = [r for r in child_results if r.call.name == "read_file"]
    assert read.is_error and "children may not read secrets.txt" in read.result
    assert "hunter2" not in str([r.body for r in llm_server.requests])
    names = [entry["hook_event_name"] for entry in recorded(log)]
    assert names == ["SubagentStop", "Stop"]  # the child's end, then the parent's
    assert recorded(log)[0]["last_assistant_message"] == "I could not read it."
