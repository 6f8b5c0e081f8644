"""Running hooks: each one a `/bin/sh -c` subprocess in the workspace, the event's JSON on its
stdin, in its own process group (docs/adr/0043, docs/adr/0021).

The hooks of one event run in parallel, each command once however many groups list it. A
hook past its timeout, or one whose caller is cancelled (the turn was), has its whole process
group killed, children included; `process_guard` also kills it if Forge itself dies. Output
past `OUTPUT_CAP_BYTES` per stream is cut with a note, so a chatty hook cannot fill memory or
the context; every secret Forge knows (`forge.config.secrets`) is masked in what is kept.

A hook whose shell exits while a background child still holds its stdout open is waited for
until that child ends or the timeout kills the group: hooks that start daemons should
redirect their output (`cmd >/dev/null 2>&1 &`), as under Claude Code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from forge.agent.hooks.config import HookCommand
from forge.agent.sandbox.environment import user_command_environment
from forge.agent.tools.process_guard import GUARD, pdeathsig_preexec
from forge.config.secrets import redact

OUTPUT_CAP_BYTES = 64 * 1024
"""Bytes of a hook's stdout (and, separately, stderr) kept; the rest is cut with a note."""
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one hook did."""

    hook: HookCommand
    exit_code: int | None
    """None when it did not start or was killed at its timeout."""
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: str = ""
    """Why it could not be started ("" when it was)."""


def hook_environment(workspace: Path) -> dict[str, str]:
    """The environment a hook gets: what the user's `!` commands get (secrets and
    Forge's own variables removed, pagers off), plus `CLAUDE_PROJECT_DIR` and
    `FORGE_PROJECT_DIR` naming the workspace."""
    environment = user_command_environment()
    environment["CLAUDE_PROJECT_DIR"] = str(workspace)
    environment["FORGE_PROJECT_DIR"] = str(workspace)
    return environment


def unique_hooks(hooks: Sequence[HookCommand]) -> list[HookCommand]:
    """`hooks` without repeated commands (the first, in config order, is kept)."""
    seen: set[str] = set()
    unique = []
    for hook in hooks:
        if hook.command not in seen:
            seen.add(hook.command)
            unique.append(hook)
    return unique


async def run_hooks(
    hooks: Sequence[HookCommand],
    stdin: bytes,
    workspace: Path,
    *,
    output_cap: int = OUTPUT_CAP_BYTES,
) -> list[HookRun]:
    """Run `hooks` (deduplicated by command) at once; their runs in config order."""
    return list(
        await asyncio.gather(
            *(
                run_hook(hook, stdin, workspace, output_cap=output_cap)
                for hook in unique_hooks(hooks)
            )
        )
    )


async def run_hook(
    hook: HookCommand, stdin: bytes, workspace: Path, *, output_cap: int = OUTPUT_CAP_BYTES
) -> HookRun:
    """Run one hook to its end or its timeout; never raises for the hook's own failures."""
    try:
        process = await _start(hook, workspace)
    except OSError as error:
        reason = error.strerror or str(error)
        return HookRun(hook, None, "", "", start_error=f"cannot start /bin/sh: {reason}")
    group = process.pid
    GUARD.track(group)
    assert process.stdout is not None and process.stderr is not None
    stdout = asyncio.create_task(_read_capped(process.stdout, output_cap))
    stderr = asyncio.create_task(_read_capped(process.stderr, output_cap))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(hook.timeout):
                await _feed(process, stdin)
                await process.wait()
                await asyncio.gather(stdout, stderr)
        except TimeoutError:
            timed_out = True
    finally:
        try:
            # Timed out, cancelled, or a child holds the pipes: end the whole group.
            if timed_out or process.returncode is None or not (stdout.done() and stderr.done()):
                _kill_group(group)
                await asyncio.shield(process.wait())
        finally:
            GUARD.untrack(group)
    out, err = await stdout, await stderr
    if timed_out:
        note = f"[timed out after {hook.timeout:g} s; its process group was killed]"
        return HookRun(hook, None, out, f"{err}\n{note}" if err else note, timed_out=True)
    return HookRun(hook, process.returncode, out, err)


async def _start(hook: HookCommand, workspace: Path) -> asyncio.subprocess.Process:
    """Start the hook's shell as the leader of a new process group. A cancellation while
    asyncio connects its pipes (the shell already runs) still ends the whole group: asyncio
    alone would kill only the shell, leaving what it started."""
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            cwd=workspace,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=hook_environment(workspace),
            preexec_fn=pdeathsig_preexec(),
        )
    )
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            process = await starting
            _kill_group(process.pid)
            await process.wait()
        raise


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write the input and close stdin; a hook that does not read it is fine."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.close()


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> str:
    """All of `stream` decoded, cut after `cap` bytes with a note saying how much was cut."""
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(_CHUNK):
        room = cap - len(kept)
        kept += chunk[:room] if room > 0 else b""
        dropped += max(0, len(chunk) - max(room, 0))
    # A hook's output is shown and may reach the model: no known secret goes with it.
    text = redact(kept.decode("utf-8", errors="replace"))
    if dropped:
        text += f"\n[{dropped} more bytes cut: hook output is limited to {cap} bytes]"
    return text


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
