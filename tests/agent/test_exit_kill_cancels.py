"""An exit signal's kill is not a command's outcome (issue 18 item 11, ADR 0021 addendum).

The TUI's signal handler SIGKILLs every live command group (`GUARD.kill_all_now`) and then
exits the app, which cancels the turn. Before the fix the tool could see its shell die first
and record "[exit code -9]" as the command's result before the cancellation recorded
"[cancelled …]" — on a busy machine the tmux test saw exactly that. These tests drive the
exit path directly with real subprocesses, and the kill lands while the call runs and nothing
cancels the task at all: the outcome must be the cancellation whatever the timing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import AgentEvent, ToolOutputDelta
from forge.agent.tools.base import ToolContext
from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool
from forge.agent.tools.process_guard import GUARD
from forge.context.conversation import CANCELLED_RESULT
from tests.agent.loop_harness import make_agent, make_provider
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

COMMAND = "echo started; sleep 1000"


async def test_a_group_killed_for_an_exit_ends_the_call_as_cancelled(workspace: Path) -> None:
    started = asyncio.Event()
    context = ToolContext(
        workspace=workspace, on_output=lambda text: started.set() if "started" in text else None
    )
    task = asyncio.create_task(
        ExecuteCommandTool().run(ExecuteCommandArgs(command=COMMAND), context)
    )
    await asyncio.wait_for(started.wait(), 30)
    GUARD.kill_all_now()  # what the exit-signal handler does; the task is not cancelled
    with pytest.raises(asyncio.CancelledError):
        result = await task
        pytest.fail(f"the kill was recorded as the command's outcome: {result.content!r}")
    assert not GUARD.live_groups


async def test_a_command_that_ends_by_itself_still_reports_its_exit_code(
    workspace: Path,
) -> None:
    # The mark is per group: a later command (after an exit-kill elsewhere) is unaffected.
    started = asyncio.Event()
    context = ToolContext(
        workspace=workspace, on_output=lambda text: started.set() if "started" in text else None
    )
    killed = asyncio.create_task(
        ExecuteCommandTool().run(ExecuteCommandArgs(command=COMMAND), context)
    )
    await asyncio.wait_for(started.wait(), 30)
    GUARD.kill_all_now()
    with pytest.raises(asyncio.CancelledError):
        await killed
    result = await ExecuteCommandTool().run(
        ExecuteCommandArgs(command="exit 3"), ToolContext(workspace)
    )
    assert result.exit_code == 3


async def test_the_turn_records_the_call_as_cancelled_and_asks_the_model_nothing_more(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": COMMAND})]), Text("no"))
    seen: list[AgentEvent] = []
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, policy=ApprovalPolicy(approve_all=True))

        async def consume() -> None:
            async for event in agent.run_turn("run it"):
                seen.append(event)
                if isinstance(event, ToolOutputDelta) and "started" in event.text:
                    GUARD.kill_all_now()

        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(consume(), 60)
    results = [m for m in agent.conversation if m.role == "tool"]
    assert [(m.content, m.meta.get("cancelled")) for m in results] == [(CANCELLED_RESULT, True)]
    assert agent.conversation.is_valid()
    assert len(llm_server.requests) == 1, "the model was not called again after the kill"
