"""`!command`: the user's shell command runs in the workspace as a real subprocess, streams its
output as tool-call events, and (optionally) becomes an observation the model sees."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from forge.agent.events import ToolCallFinished, ToolCallStarted, ToolOutputDelta
from forge.agent.input.shell_escape import USER_COMMAND_TOOL, run_shell_escape, shell_escape_command
from forge.context.conversation import Conversation
from forge.llm.messages import MessageKind, system


def test_only_a_leading_bang_is_a_command() -> None:
    assert shell_escape_command("!git status") == "git status"
    assert shell_escape_command("!  ls -la  ") == "ls -la"
    assert shell_escape_command("!") == ""
    assert shell_escape_command(" !not a command") is None
    assert shell_escape_command("hello!") is None


async def test_a_command_runs_in_the_workspace_and_is_observed(workspace: Path) -> None:
    (workspace / "marker.txt").write_text("here", encoding="utf-8")
    conversation = Conversation([system("sys")])
    events = [
        event
        async for event in run_shell_escape(
            "ls; echo out; echo err >&2; exit 3",
            workspace,
            command_timeout=30,
            conversation=conversation,
        )
    ]
    assert isinstance(events[0], ToolCallStarted)
    assert events[0].call.name == USER_COMMAND_TOOL
    streamed = "".join(e.text for e in events if isinstance(e, ToolOutputDelta))
    assert "marker.txt" in streamed and "out" in streamed and "err" in streamed
    finished = events[-1]
    assert isinstance(finished, ToolCallFinished)
    assert finished.exit_code == 3 and finished.is_error
    assert finished.result.endswith("[exit code 3]")
    note = conversation.messages[-1]
    assert note.role == "user" and note.kind is MessageKind.OBSERVATION
    assert "$ ls; echo out; echo err >&2; exit 3\n" in note.content
    assert "marker.txt" in note.content and "[exit code 3]" in note.content
    assert conversation.is_valid()


async def test_without_a_conversation_nothing_is_recorded(workspace: Path) -> None:
    events = [e async for e in run_shell_escape("echo hi", workspace, command_timeout=30)]
    assert isinstance(events[-1], ToolCallFinished) and "hi" in events[-1].result


async def test_cancelling_kills_the_command_group_and_records_nothing(workspace: Path) -> None:
    conversation = Conversation([system("sys")])
    pid_file = workspace / "pid"
    started = asyncio.Event()

    async def consume() -> None:
        async for event in run_shell_escape(
            f"sleep 30 & echo $! > {pid_file}; echo ready; wait",
            workspace,
            command_timeout=60,
            conversation=conversation,
        ):
            if isinstance(event, ToolOutputDelta) and "ready" in event.text:
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 20)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    child = int(pid_file.read_text())
    for _ in range(200):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the command's background child outlived the cancel")
    assert len(conversation) == 1  # no observation for a cancelled command
