"""Hooks as real processes: parallel and deduplicated, killed with their children at their
timeout or when cancelled, output capped."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from forge.agent.hooks.config import HookCommand
from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.payloads import stop_payload
from forge.agent.hooks.runner import run_hook, run_hooks
from forge.config.secrets import KNOWN_SECRETS
from tests.agent.hooks.support import alive, command_hook, session, user_hooks_engine


def hook(command: str, timeout: float = 30) -> HookCommand:
    return HookCommand(command, timeout, "test", project=False)


async def wait_gone(pid: int) -> bool:
    """Whether `pid` is gone, allowing its new parent a moment to reap it."""
    for _ in range(100):
        if not alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_hanging_hook_is_killed_at_its_timeout_with_its_child(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    hooks = user_hooks_engine(
        workspace,
        {"Stop": [command_hook(f"sleep 300 & echo $! > {pid_file}; wait", timeout=0.5)]},
    )
    outcome = await hooks.stop(session(workspace), "done", stop_hook_active=False)
    child = int(pid_file.read_text())
    assert await wait_gone(child)
    (reply,) = outcome.replies
    assert reply.run.timed_out and reply.run.exit_code is None
    (warning,) = outcome.warnings
    assert "timed out after 0.5 s; its process group was killed" in warning
    assert not outcome.go_on  # a timeout is a warning: the action proceeds


async def test_a_cancelled_hook_takes_its_process_group_with_it(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    task = asyncio.create_task(
        run_hook(hook(f"sleep 300 & echo $! > {pid_file}; wait"), b"{}", workspace)
    )
    # The hook's only sign of life is the file it writes, so poll it.
    while not pid_file.exists() or not pid_file.read_text().strip():  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(int(pid_file.read_text()))


async def test_hooks_of_one_event_run_at_once(workspace: Path) -> None:
    log = workspace / "log"
    commands = [
        command_hook(f"echo start-{name} >> {log}; sleep 1; echo end-{name} >> {log}")
        for name in ("a", "b")
    ]
    hooks = user_hooks_engine(workspace, {"Stop": commands})
    await hooks.run(HookEvent.STOP, stop_payload(session(workspace), "", stop_hook_active=False))
    lines = log.read_text().split()
    # One after the other would give start-a end-a start-b end-b.
    assert sorted(lines[:2]) == ["start-a", "start-b"]
    assert sorted(lines[2:]) == ["end-a", "end-b"]


async def test_the_same_command_in_several_groups_runs_once(
    workspace: Path, tmp_path: Path
) -> None:
    count = tmp_path / "count"
    same = f"echo ran >> {count}"
    hooks = user_hooks_engine(
        workspace,
        {
            "PreToolUse": [
                command_hook(same),
                command_hook(same, matcher="Bash"),
                command_hook(same, matcher="execute_command"),
            ]
        },
    )
    outcome = await hooks.pre_tool_use(session(workspace), "execute_command", {"command": "ls"})
    assert count.read_text() == "ran\n"
    assert len(outcome.replies) == 1


async def test_output_beyond_the_cap_is_cut_with_a_note(workspace: Path) -> None:
    run = await run_hook(
        hook("head -c 100000 /dev/zero | tr '\\0' x; head -c 5000 /dev/zero | tr '\\0' y >&2"),
        b"",
        workspace,
        output_cap=1000,
    )
    assert run.exit_code == 0
    assert run.stdout.startswith("x" * 1000 + "\n[99000 more bytes cut")
    assert "hook output is limited to 1000 bytes" in run.stdout
    assert run.stderr.startswith("y" * 1000 + "\n[4000 more bytes cut")


async def test_a_hook_that_ignores_its_input_is_fine(workspace: Path) -> None:
    (run,) = await run_hooks([hook("echo hi")], b"x" * 1_000_000, workspace)
    assert (run.exit_code, run.stdout) == (0, "hi\n")


async def test_secrets_and_forge_variables_are_not_passed(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary")
    monkeypatch.setenv("FORGE_LLM__API_KEY", "sk-canary2")
    run = await run_hook(hook("env"), b"", workspace)
    assert "sk-canary" not in run.stdout
    assert f"FORGE_PROJECT_DIR={workspace}" in run.stdout


async def test_known_secrets_are_masked_in_hook_output(workspace: Path) -> None:
    KNOWN_SECRETS.add(["sk-hook-canary-123456"])
    run = await run_hook(
        hook("echo key=sk-hook-canary-123456; echo sk-hook-canary-123456 >&2"), b"", workspace
    )
    assert "sk-hook-canary" not in run.stdout + run.stderr
    assert run.stdout == "key=[redacted]\n"
