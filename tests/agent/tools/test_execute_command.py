"""execute_command with real subprocesses: streaming, exit codes, timeouts and cancellation
that end the whole process group, bounded output, a clean environment."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from forge.agent.tools.base import ToolContext
from forge.agent.tools.execute_command import (
    HEAD_CHARACTERS,
    ExecuteCommandArgs,
    ExecuteCommandTool,
)
from tests.agent.tools.support import call_tool

# A child in the background that would leave a marker file a little later, while the shell
# itself waits much longer. If any process of the group survives a kill, the marker appears.
DELAYED_MARKER = "sh -c 'sleep 2; touch marker' & "
MARKER_DELAY_WITH_MARGIN = 3.5


def real_path(path: Path) -> str:
    """The path with symlinks resolved, as the shell's `pwd` reports it."""
    return os.path.realpath(path)


async def test_output_and_exit_code(workspace: Path) -> None:
    result = await call_tool("execute_command", workspace, command="echo hello")
    assert result.content == "hello\n[exit code 0]"
    assert result.exit_code == 0
    assert not result.is_error


async def test_non_zero_exit_code_is_reported(workspace: Path) -> None:
    result = await call_tool("execute_command", workspace, command="echo failing >&2; exit 3")
    assert result.content == "failing\n[exit code 3]"
    assert result.exit_code == 3
    assert result.is_error


async def test_no_output(workspace: Path) -> None:
    result = await call_tool("execute_command", workspace, command="true")
    assert result.content == "(no output)\n[exit code 0]"


async def test_runs_in_the_workspace(workspace: Path) -> None:
    (workspace / "here.txt").write_text("")
    result = await call_tool("execute_command", workspace, command="pwd; ls")
    assert result.content.splitlines()[:2] == [real_path(workspace), "here.txt"]


async def test_stdout_and_stderr_are_merged_in_order(workspace: Path) -> None:
    seen: list[str] = []
    result = await call_tool(
        "execute_command",
        workspace,
        command="echo one; echo two >&2; echo three",
        on_output=seen.append,
    )
    assert "".join(seen) == "one\ntwo\nthree\n"
    assert result.content == "one\ntwo\nthree\n[exit code 0]"


async def test_output_streams_while_the_command_runs(workspace: Path) -> None:
    """The command waits for a file that only the output callback creates, after it has seen
    the first line: without live streaming this would never finish (it would time out)."""
    go = workspace / "go"
    seen: list[str] = []

    def on_output(text: str) -> None:
        seen.append(text)
        if "first" in "".join(seen):
            go.touch()

    result = await call_tool(
        "execute_command",
        workspace,
        command="echo first; while [ ! -f go ]; do sleep 0.02; done; echo second",
        on_output=on_output,
        command_timeout=60,
    )
    assert result.exit_code == 0, result.content
    assert "".join(seen) == "first\nsecond\n"


async def test_multibyte_characters_survive_chunking(workspace: Path) -> None:
    result = await call_tool(
        "execute_command", workspace, command="printf 'caf\\303\\251 \\342\\234\\223\\n'"
    )
    assert result.content == "café ✓\n[exit code 0]"


async def test_stdin_is_empty(workspace: Path) -> None:
    result = await call_tool("execute_command", workspace, command="cat; echo after")
    assert result.content == "after\n[exit code 0]"


async def test_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    result = await call_tool(
        "execute_command",
        workspace,
        command=DELAYED_MARKER + "echo waiting; sleep 30",
        timeout=0.5,
    )
    assert result.is_error
    assert result.metadata["timed_out"] is True
    assert "timed out after 0.5 seconds" in result.content
    assert result.content.startswith("waiting\n")
    assert result.exit_code is not None and result.exit_code < 0
    await asyncio.sleep(MARKER_DELAY_WITH_MARGIN)
    assert not (workspace / "marker").exists()


async def test_timeout_defaults_to_the_context(workspace: Path) -> None:
    result = await call_tool("execute_command", workspace, command="sleep 30", command_timeout=0.3)
    assert result.metadata["timed_out"] is True
    assert "timed out after 0.3 seconds" in result.content


async def test_a_group_ignoring_sigterm_gets_sigkill(workspace: Path) -> None:
    result = await call_tool(
        "execute_command", workspace, command="trap '' TERM; sleep 30", timeout=0.3
    )
    assert result.metadata["timed_out"] is True
    assert result.exit_code == -9


async def test_cancellation_kills_the_group_and_propagates(workspace: Path) -> None:
    started = asyncio.Event()

    def on_output(text: str) -> None:
        if "started" in text:
            started.set()

    tool = ExecuteCommandTool()
    context = ToolContext(workspace=workspace, on_output=on_output)
    task = asyncio.create_task(
        tool.run(ExecuteCommandArgs(command=DELAYED_MARKER + "echo started; sleep 30"), context)
    )
    await asyncio.wait_for(started.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(MARKER_DELAY_WITH_MARGIN)
    assert not (workspace / "marker").exists()


async def test_leftover_background_processes_are_ended(workspace: Path) -> None:
    """A background child holding the output pipe neither keeps the call waiting nor
    outlives it."""
    result = await call_tool(
        "execute_command", workspace, command=DELAYED_MARKER + "echo done", command_timeout=60
    )
    assert result.content == "done\n[exit code 0]"
    await asyncio.sleep(MARKER_DELAY_WITH_MARGIN)
    assert not (workspace / "marker").exists()


async def test_long_output_keeps_head_and_tail(workspace: Path) -> None:
    seen: list[str] = []
    result = await call_tool(
        "execute_command", workspace, command="seq 1 100000", on_output=seen.append
    )
    full = "".join(seen)
    assert full == "".join(f"{number}\n" for number in range(1, 100001))
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith("99999\n100000\n[exit code 0]")
    assert "lines (" in result.content and "characters) elided ...]" in result.content
    assert "\n50000\n" not in result.content
    assert len(result.content) < 2 * HEAD_CHARACTERS + 200
    assert result.metadata["output_truncated"] is True


async def test_forge_settings_and_api_key_are_not_passed_on(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("FORGE_LLM__API_KEY", "sk-test-other")
    monkeypatch.setenv("PROJECT_VARIABLE", "kept")
    result = await call_tool(
        "execute_command",
        workspace,
        command='echo "[$OPENAI_API_KEY][$FORGE_LLM__API_KEY][$PROJECT_VARIABLE][$GIT_PAGER]"',
    )
    assert result.content == "[][][kept][cat]\n[exit code 0]"


async def test_bad_arguments_are_errors_for_the_model(workspace: Path) -> None:
    empty = await call_tool("execute_command", workspace, command="   ")
    negative = await call_tool("execute_command", workspace, command="true", timeout=-1)
    missing = await call_tool("execute_command", workspace)
    assert empty.is_error and "command is empty" in empty.content
    assert negative.is_error and "positive" in negative.content
    assert missing.is_error and "missing required argument 'command'" in missing.content


def test_describe_and_preview(workspace: Path) -> None:
    tool = ExecuteCommandTool()
    context = ToolContext(workspace=workspace)
    command = "pytest -q\necho second line"
    assert tool.describe({"command": "pytest -q"}) == "execute_command: pytest -q"
    assert tool.describe({"command": command}) == "execute_command: pytest -q …"
    assert tool.preview({"command": command}, context) == command
    assert tool.describe({}) == "execute_command: ?"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="zombies are told apart through /proc")
def test_a_group_of_zombies_is_not_alive() -> None:
    import os
    import subprocess
    import time

    from forge.agent.tools.process_groups import group_alive

    # A finished child nobody has reaped yet: a zombie, which kill(0) still finds. Esc must
    # not wait the whole grace period for such a group (a container's PID 1 may reap late).
    child = subprocess.Popen(["true"], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                break
            time.sleep(0.01)
        os.killpg(child.pid, 0)  # the group still exists for kill()
        assert not group_alive(child.pid)
    finally:
        child.wait()
    running = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert group_alive(running.pid)
    finally:
        running.kill()
        running.wait()
