"""`execute_command`: run a shell command in the workspace, streamed, bounded and killable.

The command runs as `/bin/sh -c COMMAND` in its own session, so it leads a new process group
and everything it starts can be signalled at once. stdout and stderr share one pipe, so their
interleaving is kept. On timeout or cancellation the whole group gets SIGTERM, then SIGKILL
after a grace period. When the shell exits, whatever it left running in its group is ended the
same way: nothing the agent starts outlives the call. If Forge itself ends first — a signal,
a crash, `kill -9` — `process_guard` ends the group (docs/adr/0021); a group killed that way
for an exit signal ends the call with CancelledError, so it is recorded as cancelled.

A model's command goes through its session's sandbox (`ToolContext.sandbox`,
docs/adr/0053): bubblewrap's argv around the shell, an environment without provider keys, and
the session's network namespace and pids cgroup joined between fork and exec. The user's `!`
commands have no sandbox and keep their environment.

Every secret the process knows (`forge.config.secrets`: API keys, MCP servers' env and header
values) is masked in the output as it streams, before the model, the screen or the session
sees it: `cat ~/.config/forge/config.yaml` prints "[redacted]" for the key (docs/adr/0035).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from forge.agent.sandbox.environment import user_command_environment
from forge.agent.sandbox.sandbox import PreparedCommand, SandboxRefusedError
from forge.agent.tools.arguments import Boolean, ModelTool, Number, ToolArguments, tool_schema
from forge.agent.tools.background import AdoptedProcess, BackgroundCommands, BackgroundLimitError
from forge.agent.tools.background_start import start_in_background
from forge.agent.tools.base import ToolContext, ToolError, ToolResult, first_line
from forge.agent.tools.output import HeadTailBuffer
from forge.agent.tools.process_groups import group_alive, signal_group
from forge.agent.tools.process_guard import GUARD, pdeathsig_preexec
from forge.agent.tools.workspace import workspace_root
from forge.config.secrets import StreamRedactor
from forge.llm.protocols import ToolSpec

HEAD_CHARACTERS = 10_000
"""Characters kept from the start of a command's output."""
TAIL_CHARACTERS = 10_000
"""Characters kept from the end of a command's output."""
MAX_TIMEOUT_SECONDS = 3600.0
"""The longest timeout a model may ask for."""
TERMINATE_GRACE_SECONDS = 2.0
"""How long a process group has to exit after SIGTERM before it gets SIGKILL."""
DRAIN_GRACE_SECONDS = 2.0
"""How long to wait for the output pipe to close once the group is gone (a process that left
the group may still hold it)."""
_READ_SIZE = 65536
EXIT_KILL_REASON = "Forge is exiting: the command's process group was killed"
"""Carried by the CancelledError a call raises when `GUARD.kill_all_now` killed its group."""


class ExecuteCommandArgs(ToolArguments):
    """`execute_command`'s arguments."""

    command: str = Field(description="The shell command to run.")
    timeout: Number | None = Field(
        default=None, description="Seconds before the command is killed (default 120)."
    )
    unconfined: bool = Field(
        default=False,
        description=(
            "Run outside the sandbox (network, paths outside the workspace). Only after the "
            "command failed in the sandbox for lack of them; the user is asked, with `reason`."
        ),
    )
    reason: str = Field(default="", description="Why the command must run unconfined.")
    background: Boolean = Field(
        default=False,
        description=(
            "Start it and return at once with an id (a dev server, a watcher, a long test "
            "run): no timeout; read its output with command_output, end it with command_stop."
        ),
    )


class ExecuteCommandTool(ModelTool[ExecuteCommandArgs]):
    """Runs `/bin/sh -c command` in the workspace with a timeout and bounded output."""

    spec = ToolSpec(
        name="execute_command",
        description=(
            "Run a shell command (/bin/sh -c) in the workspace directory. stdout and stderr "
            "are merged; stdin is empty, so interactive prompts fail. Long output is cut to "
            "its head and tail. The result ends with the exit code. With background: true it "
            "returns at once with an id (command_output reads it, command_stop ends it)."
        ),
        parameters=tool_schema(ExecuteCommandArgs),
    )
    arguments_model = ExecuteCommandArgs
    mutates = True

    def __init__(
        self, head_characters: int = HEAD_CHARACTERS, tail_characters: int = TAIL_CHARACTERS
    ) -> None:
        """`head_characters`/`tail_characters` bound the output the model reads."""
        self.head_characters = head_characters
        self.tail_characters = tail_characters

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "execute_command: pytest -q"."""
        command = arguments.get("command")
        shown = first_line(command) if isinstance(command, str) else "?"
        suffix = " (background)" if arguments.get("background") else ""
        return f"execute_command: {shown}{suffix}"

    def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> str:
        """The full command, as it would run."""
        command = arguments.get("command")
        return command if isinstance(command, str) else self.describe(arguments)

    async def run(self, args: ExecuteCommandArgs, context: ToolContext) -> ToolResult:
        """Run the command; the result holds the (capped) output and the exit code."""
        command = args.command
        if not command.strip():
            raise ToolError("command is empty")
        timeout = float(args.timeout or context.command_timeout)
        if timeout <= 0:
            raise ToolError("timeout must be a positive number of seconds")
        timeout = min(timeout, MAX_TIMEOUT_SECONDS)
        cwd = workspace_root(context.workspace)
        sandbox = context.sandbox
        if sandbox is not None and not sandbox.started:
            # The first confined command starts the session's namespace holder: off the loop.
            await asyncio.to_thread(sandbox.start)
        prepared = _prepare(command, cwd, args, context)
        if args.background:
            return start_in_background(command, prepared, cwd, context)
        moved = False
        try:
            result = await self._run(
                prepared, cwd, timeout_seconds=timeout, context=context, command=command
            )
            moved = bool(result.metadata.get("background"))
        finally:
            if not moved:  # a command moved to the background finishes there
                prepared.finish()
        if prepared.confined and result.is_error and context.sandbox is not None:
            result.content += "\n" + context.sandbox.failure_hint()
        return result

    async def _run(
        self,
        prepared: PreparedCommand,
        cwd: Path,
        *,
        timeout_seconds: float,
        context: ToolContext,
        command: str = "",
    ) -> ToolResult:
        timeout = timeout_seconds
        # Our own pipe rather than asyncio's: with asyncio's, Process.wait() (Python 3.11)
        # returns only once the pipe closes, which a background child can hold open forever.
        read_descriptor, write_descriptor = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *prepared.argv,
                cwd=cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_descriptor,
                stderr=write_descriptor,
                start_new_session=True,
                env=prepared.environment,
                preexec_fn=_before_exec(prepared.before_exec),
            )
        except OSError as error:
            os.close(read_descriptor)
            raise ToolError(f"cannot start {prepared.argv[0]}: {error.strerror}") from None
        finally:
            os.close(write_descriptor)
        GUARD.track(process.pid)
        try:
            output, transport = await _open_pipe_reader(read_descriptor)
        except BaseException:
            # Cancelled before the reader existed: end the group all the same, and forget it.
            signal_group(process.pid, signal.SIGKILL)
            GUARD.untrack(process.pid)
            raise
        buffer = HeadTailBuffer(self.head_characters, self.tail_characters)
        redactor = StreamRedactor()
        # Where the output goes: the call's buffer and screen, or, once the command has moved
        # to the background, that command's store.
        sink: list[Callable[[str], None]] = [lambda text: _emit(text, buffer, context)]
        reader = asyncio.create_task(_pump(output, sink, redactor))
        background = context.background
        move = background.foreground_started() if background is not None else None
        timed_out = False
        group_ended = False
        moved = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await _exit_or_move(process, move)
            except TimeoutError:
                timed_out = True
            if move is not None and move.is_set() and process.returncode is None:
                assert background is not None
                result = _move_to_background(
                    background, command, process, prepared, buffer, sink, reader, transport
                )
                if result is not None:
                    moved = group_ended = True
                    return result
            await _end_process_group(process)
            group_ended = True
            await _finish_reading(reader)
        except asyncio.CancelledError:
            await _end_process_group(process)
            group_ended = True
            await _finish_reading(reader)
            raise
        finally:
            if background is not None and move is not None:
                background.foreground_ended(move)
            if not group_ended:
                # Cancelled again while cleaning up: leave nothing running all the same.
                signal_group(process.pid, signal.SIGKILL)
            killed_for_exit = GUARD.killed_for_exit(process.pid)
            if not moved:  # a moved command's group, reader and pipe are the background's
                GUARD.untrack(process.pid)
                reader.cancel()
                transport.close()
        # What the redactor still holds if the pipe never closed (a process outside the group).
        _emit(redactor.flush(), buffer, context)
        if killed_for_exit:
            # Forge is exiting (a signal): the kill is not the command's outcome. End as the
            # turn's cancellation does, whichever of the two reached this task first.
            raise asyncio.CancelledError(EXIT_KILL_REASON)
        exit_code = process.returncode if process.returncode is not None else -signal.SIGKILL
        return _result(buffer, exit_code, timed_out, timeout)


async def _open_pipe_reader(
    read_descriptor: int,
) -> tuple[asyncio.StreamReader, asyncio.ReadTransport]:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader()
    pipe = os.fdopen(read_descriptor, "rb", buffering=0)
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
    return stream, transport


async def _pump(
    output: asyncio.StreamReader,
    sink: list[Callable[[str], None]],
    redactor: StreamRedactor,
) -> None:
    """Copy the merged output, secrets masked, to `sink[0]` (the call's buffer and
    `context.on_output`, or a moved command's store) until the pipe closes."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await output.read(_READ_SIZE)
        text = redactor.feed(decoder.decode(chunk, final=not chunk))
        if not chunk:
            text += redactor.flush()
        if text:
            sink[0](text)
        if not chunk:
            return


async def _exit_or_move(process: asyncio.subprocess.Process, move: asyncio.Event | None) -> None:
    """Wait until the process exits, or (with `move`) until a front end asks for the command
    to go on in the background."""
    if move is None:
        await process.wait()
        return
    exited = asyncio.ensure_future(process.wait())
    moved = asyncio.ensure_future(move.wait())
    try:
        await asyncio.wait({exited, moved}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        moved.cancel()
        if not exited.done():
            exited.cancel()


def _move_to_background(
    background: BackgroundCommands,
    command: str,
    process: asyncio.subprocess.Process,
    prepared: PreparedCommand,
    buffer: HeadTailBuffer,
    sink: list[Callable[[str], None]],
    reader: asyncio.Task[None],
    transport: asyncio.ReadTransport,
) -> ToolResult | None:
    """Hand the running command to the background (docs/adr/0057): its output so far, its
    process and group, its reader (now feeding the background store); the call answers at
    once. None when the background has no room (the call goes on waiting)."""
    loop = asyncio.get_running_loop()
    drained = threading.Event()
    reader.add_done_callback(lambda _: drained.set())

    def close() -> None:
        loop.call_soon_threadsafe(reader.cancel)
        loop.call_soon_threadsafe(transport.close)

    so_far = buffer.render()
    try:
        entry = background.adopt(
            command,
            AdoptedProcess(process),
            prepared,
            output_so_far=so_far,
            drained=drained.wait,
            close=close,
        )
    except BackgroundLimitError:
        return None
    sink[0] = entry.output.add
    shown = so_far if not so_far or so_far.endswith("\n") else so_far + "\n"
    return ToolResult(
        content=(
            f"{shown}[moved to the background by the user as {entry.id}; it goes on running. "
            f'Read its output with command_output(id: "{entry.id}", since: {len(so_far)}), '
            f'end it with command_stop(id: "{entry.id}").]'
        ),
        metadata={"background_id": entry.id, "background": True},
    )


def _emit(text: str, buffer: HeadTailBuffer, context: ToolContext) -> None:
    if text:
        buffer.add(text)
        if context.on_output is not None:
            context.on_output(text)


async def _finish_reading(reader: asyncio.Task[None]) -> None:
    """Let the reader drain what the pipe still holds, but not forever."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(reader), DRAIN_GRACE_SECONDS)


async def _end_process_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the command's process group, then SIGKILL whatever is left after a grace."""
    group = process.pid
    if not signal_group(group, signal.SIGTERM):
        await process.wait()
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TERMINATE_GRACE_SECONDS
    # No event fires when a process group empties, so poll it.
    while group_alive(group) and loop.time() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    signal_group(group, signal.SIGKILL)
    await process.wait()


def _prepare(
    command: str, cwd: Path, args: ExecuteCommandArgs, context: ToolContext
) -> PreparedCommand:
    """The user's `!` commands run as they are; the model's through its session's sandbox."""
    sandbox = context.sandbox
    if sandbox is None:
        return PreparedCommand(["/bin/sh", "-c", command], user_command_environment())
    try:
        return sandbox.prepare(
            command, cwd, unconfined=args.unconfined and context.unconfined_approved
        )
    except SandboxRefusedError as error:
        raise ToolError(str(error)) from None


def _before_exec(sandboxed: Callable[[], None] | None) -> Callable[[], None] | None:
    """The child's work between fork and exec: the parent-death signal, then the sandbox's."""
    death_signal = pdeathsig_preexec()
    if sandboxed is None:
        return death_signal

    def before_exec() -> None:
        if death_signal is not None:
            death_signal()
        sandboxed()

    return before_exec


def _result(buffer: HeadTailBuffer, exit_code: int, timed_out: bool, timeout: float) -> ToolResult:
    output = buffer.render()
    if output and not output.endswith("\n"):
        output += "\n"
    if timed_out:
        status = (
            f"[timed out after {timeout:g} seconds; the command and everything it started "
            f"were killed (exit code {exit_code})]"
        )
    else:
        status = f"[exit code {exit_code}]"
    content = (output or "(no output)\n") + status
    return ToolResult(
        content=content,
        is_error=timed_out or exit_code != 0,
        exit_code=exit_code,
        metadata={"timed_out": timed_out, "output_truncated": buffer.elided},
    )
