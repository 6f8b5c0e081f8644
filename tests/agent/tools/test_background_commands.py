"""Background commands with real processes: started at once, output read from the start or
an offset (bounded, secrets masked), stopped with everything they started, limited in number
and in time, all ended when the session's commands are (docs/adr/0057)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.background_output import BackgroundOutput
from forge.agent.tools.background_tools import (
    CommandOutputArgs,
    CommandOutputTool,
    CommandStopArgs,
    CommandStopTool,
)
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.execute_command import ExecuteCommandArgs, ExecuteCommandTool
from forge.agent.tools.process_groups import group_alive
from forge.config.secrets import KNOWN_SECRETS

DEADLINE = 30.0


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() >= deadline:
            pytest.fail(f"not within {DEADLINE:g} s: {what}")
        time.sleep(0.05)


async def start(context: ToolContext, command: str) -> ToolResult:
    args = ExecuteCommandArgs(command=command, background=True)
    return await ExecuteCommandTool().run(args, context)


async def output(context: ToolContext, command_id: str, since: int | None = None) -> ToolResult:
    return await CommandOutputTool().run(CommandOutputArgs(id=command_id, since=since), context)


@pytest.fixture
def background() -> BackgroundCommands:
    return BackgroundCommands(max_running=4)


async def test_a_background_command_returns_at_once_and_its_output_is_read_later(
    workspace: Path, background: BackgroundCommands
) -> None:
    context = ToolContext(workspace, background=background)
    started = await start(context, "echo first; sleep 30; echo never")
    assert not started.is_error and "bg1" in started.content
    entry = background.get("bg1")
    assert entry is not None and entry.running  # it did not wait for the 30 s

    wait_until(lambda: "first" in entry.output.read().text, "the first line arrived")
    read = await output(context, "bg1")
    assert read.content.startswith("first\n")
    assert "[bg1 running for" in read.content and read.metadata["running"] is True
    later = await output(context, "bg1", since=int(read.metadata["next"]))
    assert "(no new output)" in later.content

    stopped = await CommandStopTool().run(CommandStopArgs(id="bg1"), context)
    assert "stopped" in stopped.content and not entry.running
    assert "never" not in (await output(context, "bg1")).content
    assert not group_alive(entry.process.pid)


async def test_output_ends_with_the_exit_code_and_since_reads_only_new_output(
    workspace: Path, background: BackgroundCommands
) -> None:
    context = ToolContext(workspace, background=background)
    await start(context, "echo one; echo two; exit 3")
    entry = background.get("bg1")
    assert entry is not None
    await asyncio.to_thread(entry.wait, DEADLINE)

    whole = await output(context, "bg1")
    status = f"[bg1 exited with exit code 3 after {entry.runtime:.0f} s]"
    assert whole.content == f"one\ntwo\n{status} [next: 8]"
    assert whole.exit_code == 3
    tail = await output(context, "bg1", since=4)
    assert tail.content.startswith("two\n[bg1 exited with exit code 3")


async def test_a_secret_in_background_output_is_masked(
    workspace: Path, background: BackgroundCommands
) -> None:
    KNOWN_SECRETS.add(["sk-background-secret-123"])
    context = ToolContext(workspace, background=background)
    await start(context, "echo key=sk-background-secret-123")
    entry = background.get("bg1")
    assert entry is not None
    await asyncio.to_thread(entry.wait, DEADLINE)
    text = (await output(context, "bg1")).content
    assert "key=[redacted]" in text and "sk-background" not in text


async def test_stopping_ends_everything_the_command_started(
    workspace: Path, background: BackgroundCommands
) -> None:
    context = ToolContext(workspace, background=background)
    await start(context, "sleep 1000 & sh -c 'sleep 1001' & echo $! > child.txt; wait")
    entry = background.get("bg1")
    assert entry is not None
    wait_until(lambda: (workspace / "child.txt").exists(), "the children started")
    await CommandStopTool().run(CommandStopArgs(id="bg1"), context)
    assert not group_alive(entry.process.pid)


async def test_a_fifth_background_command_is_refused_naming_the_limit(
    workspace: Path, background: BackgroundCommands
) -> None:
    context = ToolContext(workspace, background=background)
    for _ in range(4):
        assert not (await start(context, "sleep 1000")).is_error
    with pytest.raises(ToolError, match=r"tools\.max_background = 4"):
        await start(context, "sleep 1000")
    assert len(background.running()) == 4
    ended = background.stop_all("exit")
    assert [entry.id for entry in ended] == ["bg1", "bg2", "bg3", "bg4"]
    assert not any(group_alive(entry.process.pid) for entry in ended)


async def test_background_timeout_stops_a_command(workspace: Path) -> None:
    background = BackgroundCommands(timeout=0.5)
    context = ToolContext(workspace, background=background)
    started = await start(context, "sleep 1000")
    assert "at most 0.5 s (tools.background_timeout)" in started.content
    entry = background.get("bg1")
    assert entry is not None
    assert await asyncio.to_thread(entry.wait, DEADLINE)
    assert "timed out after 0.5 s" in (await output(context, "bg1")).content


async def test_after_stop_all_no_background_command_starts(
    workspace: Path, background: BackgroundCommands
) -> None:
    background.stop_all("exit")
    with pytest.raises(ToolError, match="the session has ended"):
        await start(ToolContext(workspace, background=background), "true")


def test_kept_output_is_its_head_and_tail_with_offsets() -> None:
    store = BackgroundOutput(head_chars=10, tail_chars=10)
    store.add("0123456789" + "x" * 100 + "abcdefghij")
    whole = store.read()
    assert whole.text.startswith("0123456789\n[... 100 characters elided ...]\n")
    assert whole.text.endswith("abcdefghij") and whole.next_offset == 120
    assert store.read(115).text == "fghij"
    assert store.read(50).text == "[... 60 characters elided ...]\nabcdefghij"


async def test_a_running_foreground_command_moves_to_the_background(
    workspace: Path, background: BackgroundCommands
) -> None:
    outputs: list[str] = []
    context = ToolContext(workspace, background=background, on_output=outputs.append)
    args = ExecuteCommandArgs(
        command="echo before; until [ -e go ]; do sleep 0.05; done; echo after"
    )
    call = asyncio.ensure_future(ExecuteCommandTool().run(args, context))
    while "before" not in "".join(outputs):  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    assert background.foreground_running
    assert background.move_foreground() == ""
    result = await asyncio.wait_for(call, DEADLINE)
    assert result.content.startswith("before\n[moved to the background by the user as bg1")
    assert not background.foreground_running
    entry = background.get("bg1")
    assert entry is not None and entry.running  # the call answered; the command goes on

    (workspace / "go").touch()
    assert await asyncio.to_thread(entry.wait, DEADLINE)
    read = await output(context, "bg1")
    assert read.content.startswith("before\nafter\n[bg1 exited with exit code 0")
    assert "after" not in "".join(outputs)  # no longer streamed to the finished call
    assert not group_alive(entry.process.pid)


async def test_moving_needs_a_running_command_and_room(
    workspace: Path, background: BackgroundCommands
) -> None:
    assert background.move_foreground() == "no command is running in the foreground"
    context = ToolContext(workspace, background=background)
    for _ in range(4):
        await start(context, "sleep 1000")
    call = asyncio.ensure_future(
        ExecuteCommandTool().run(ExecuteCommandArgs(command="sleep 0.5; echo done"), context)
    )
    while not background.foreground_running:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    assert "tools.max_background = 4" in background.move_foreground()
    result = await asyncio.wait_for(call, DEADLINE)
    assert result.content == "done\n[exit code 0]"  # it stayed in the foreground
    background.stop_all("exit")
