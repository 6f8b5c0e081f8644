"""Background commands: a model's command that runs on while the turn goes on (issue 40).

`execute_command` with `background: true` hands its prepared command (sandboxed as any other,
docs/adr/0053: it shares the session's network namespace, so a server it starts answers a
later command on loopback) to the session's `BackgroundCommands`, which starts it and returns
an id at once. Each command gets a reader thread (output masked as it streams, kept bounded in
`BackgroundOutput`) and a waiter thread (the exit, the optional `tools.background_timeout`):
threads, not tasks, so a command outlives the turn — and the event loop — that started it.

Nothing outlives the session (docs/adr/0057): `stop_all` ends every one (exit, `/clear`);
each group is tracked by the process-group guard, which kills it if Forge dies (docs/adr/0021);
and `BackgroundRecords` keeps a file per session naming the running ones, so the next start
ends what a crash left and says which.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from forge.agent.sandbox.sandbox import PreparedCommand
from forge.agent.tools.background_output import BackgroundOutput, OutputSlice
from forge.agent.tools.background_records import BackgroundRecords, RecordedCommand
from forge.agent.tools.process_groups import group_alive, signal_group
from forge.agent.tools.process_guard import GUARD, pdeathsig_preexec
from forge.config.secrets import StreamRedactor

HEAD_CHARACTERS = 10_000
"""Characters kept from the start of a background command's output."""
TAIL_CHARACTERS = 50_000
"""Characters kept from the end (what `command_output` and `/tasks` read most)."""
TERMINATE_GRACE_SECONDS = 2.0
"""How long a stopped command's group has to exit after SIGTERM before SIGKILL."""
DRAIN_GRACE_SECONDS = 2.0
"""How long the reader may still drain the pipe once the group is gone."""
_READ_SIZE = 65536


class BackgroundLimitError(Exception):
    """`tools.max_background` commands run already."""


class ProcessView(Protocol):
    """What a background command needs of its process (a `subprocess.Popen`, or a foreground
    command's asyncio process moved to the background: `AdoptedProcess`)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class AdoptedProcess:
    """A foreground command's `asyncio.subprocess.Process`, seen from threads: its return
    code is set by the event loop's child watcher, so waiting is polling it."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.pid = process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once the loop has reaped it."""
        return self._process.returncode

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        return self._process.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Block until it has exited; `subprocess.TimeoutExpired` after `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._process.returncode is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("background command", timeout or 0)
            time.sleep(0.05)
        return self._process.returncode


@dataclass
class BackgroundCommand:
    """One background command: what ran, its output, and how it ended (when it has)."""

    id: str
    command: str
    process: ProcessView
    output: BackgroundOutput
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    ended: float | None = None
    exit_code: int | None = None
    stopped_by: str = ""
    """Why Forge ended it ("stopped", "timed out", "exit", "clear"); "" if it ended itself."""
    _finished: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        """Whether it has not ended yet."""
        return not self._finished.is_set()

    @property
    def runtime(self) -> float:
        """Seconds it has run (until it ended)."""
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def state(self) -> str:
        """E.g. "running", "exited 0", "stopped (exit code -15)"."""
        if self.running:
            return "running"
        if self.stopped_by:
            return f"{self.stopped_by} (exit code {self.exit_code})"
        return f"exited {self.exit_code}"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until it has ended (output drained); False if `timeout` passed first."""
        return self._finished.wait(timeout)

    def last_lines(self, count: int = 3) -> list[str]:
        """Its last `count` non-empty output lines."""
        text = self.output.read(max(0, self.output.total - 4000)).text
        return [line for line in text.splitlines() if line.strip()][-count:]


class BackgroundCommands:
    """The session's background commands: start, read, stop, and end them all.

    `max_running`: at most this many at once (`tools.max_background`); `timeout`: seconds after
    which one is stopped (`tools.background_timeout`, None for never). `records`: the file that
    tells the next start which were running if this process dies without `stop_all`.
    `on_change` is called (from any thread) when one starts or ends.
    """

    def __init__(
        self,
        *,
        max_running: int = 4,
        timeout: float | None = None,
        records: BackgroundRecords | None = None,
        head_chars: int = HEAD_CHARACTERS,
        tail_chars: int = TAIL_CHARACTERS,
    ) -> None:
        self.max_running = max_running
        self.timeout = timeout
        self.records = records
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self.on_change: Callable[[BackgroundCommand], None] | None = None
        self._lock = threading.Lock()
        self._commands: dict[str, BackgroundCommand] = {}
        self._counter = 0
        self._closed = False
        self._foreground: asyncio.Event | None = None
        """Set to move the running foreground command to the background (a front end's
        key); None while no foreground command runs."""

    # --- views -------------------------------------------------------------------------------
    def all(self) -> list[BackgroundCommand]:
        """Every background command of the session, oldest first (ended ones too)."""
        with self._lock:
            return list(self._commands.values())

    def running(self) -> list[BackgroundCommand]:
        """The ones still running."""
        return [command for command in self.all() if command.running]

    def get(self, command_id: str) -> BackgroundCommand | None:
        """The command called `command_id`, if any."""
        with self._lock:
            return self._commands.get(command_id.strip())

    # --- a foreground command moved to the background ----------------------------------------
    @property
    def foreground_running(self) -> bool:
        """Whether a foreground model command runs now (one a front end may move)."""
        return self._foreground is not None

    def foreground_started(self) -> asyncio.Event:
        """A foreground command starts: the event it waits on besides its exit."""
        self._foreground = asyncio.Event()
        return self._foreground

    def foreground_ended(self, event: asyncio.Event) -> None:
        """The foreground command `event` belongs to has ended or moved."""
        if self._foreground is event:
            self._foreground = None

    def move_foreground(self) -> str:
        """Ask the running foreground command to go on in the background (call on the event
        loop's thread); "" when it will, else why not."""
        if self._foreground is None:
            return "no command is running in the foreground"
        if self._closed:
            return "the session has ended"
        running = len(self.running())
        if running >= self.max_running:
            return (
                f"{running} background commands run already, the most allowed "
                f"(tools.max_background = {self.max_running})"
            )
        self._foreground.set()
        return ""

    def adopt(
        self,
        command: str,
        process: ProcessView,
        prepared: PreparedCommand,
        *,
        output_so_far: str,
        drained: Callable[[float], object],
        close: Callable[[], None],
    ) -> BackgroundCommand:
        """Take over a running foreground command: its output so far, its process (whose
        output the caller now feeds into the entry's store), `drained(timeout)` waiting for
        its reader to finish and `close` releasing it. `BackgroundLimitError` at the limit."""
        with self._lock:
            if self._closed or sum(1 for e in self._commands.values() if e.running) >= (
                self.max_running
            ):
                raise BackgroundLimitError("no room for another background command")
            self._counter += 1
            command_id = f"bg{self._counter}"
            entry = BackgroundCommand(
                command_id, command, process, BackgroundOutput(self.head_chars, self.tail_chars)
            )
            entry.output.add(output_so_far)
            self._commands[command_id] = entry
        self._write_records()

        def wait_for_reader(timeout: float) -> None:
            drained(timeout)
            close()

        threading.Thread(
            target=self._wait,
            args=(entry, wait_for_reader, prepared),
            daemon=True,
            name=command_id,
        ).start()
        self._changed(entry)
        return entry

    # --- verbs -------------------------------------------------------------------------------
    def start(self, command: str, prepared: PreparedCommand, cwd: Path) -> BackgroundCommand:
        """Start `command` (prepared by the sandbox, or as the user's) and return at once.

        `BackgroundLimitError` when `max_running` run already or the session has ended;
        `OSError` when it cannot start."""
        with self._lock:
            if self._closed:
                raise BackgroundLimitError("the session has ended; no background command starts")
            running = sum(1 for entry in self._commands.values() if entry.running)
            if running >= self.max_running:
                raise BackgroundLimitError(
                    f"{running} background commands run already, the most allowed "
                    f"(tools.max_background = {self.max_running}); stop one with command_stop "
                    "or raise tools.max_background"
                )
            self._counter += 1
            command_id = f"bg{self._counter}"
        read_descriptor, write_descriptor = os.pipe()
        try:
            process = subprocess.Popen(
                prepared.argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=write_descriptor,
                stderr=write_descriptor,
                start_new_session=True,
                env=prepared.environment,
                preexec_fn=_before_exec(prepared.before_exec),
            )
        except OSError:
            os.close(read_descriptor)
            prepared.finish()
            raise
        finally:
            os.close(write_descriptor)
        GUARD.track(process.pid)
        entry = BackgroundCommand(
            command_id, command, process, BackgroundOutput(self.head_chars, self.tail_chars)
        )
        with self._lock:
            self._commands[command_id] = entry
        self._write_records()
        reader = threading.Thread(
            target=_read_output, args=(read_descriptor, entry), daemon=True, name=command_id
        )
        reader.start()
        threading.Thread(
            target=self._wait, args=(entry, reader.join, prepared), daemon=True, name=command_id
        ).start()
        self._changed(entry)
        return entry

    def read(self, command_id: str, since: int = 0, limit_chars: int = 20_000) -> OutputSlice:
        """Its output from offset `since` (bounded); KeyError for an unknown id."""
        entry = self.get(command_id)
        if entry is None:
            raise KeyError(command_id)
        return entry.output.read(since, limit_chars)

    def stop(self, command_id: str, reason: str = "stopped") -> BackgroundCommand:
        """End the command and everything it started (SIGTERM, then SIGKILL after a grace);
        blocks until it has ended. KeyError for an unknown id."""
        entry = self.get(command_id)
        if entry is None:
            raise KeyError(command_id)
        if entry.running:
            if not entry.stopped_by:
                entry.stopped_by = reason
            _end_group(entry.process)
            entry.wait(TERMINATE_GRACE_SECONDS + DRAIN_GRACE_SECONDS + 1)
        return entry

    def stop_all(self, reason: str) -> list[BackgroundCommand]:
        """End every running command (the session ends: `reason` is "exit", "clear", …) and
        refuse new ones; returns those that were running. The records file is removed."""
        with self._lock:
            self._closed = True
        ended = self.running()
        for entry in ended:
            entry.stopped_by = entry.stopped_by or reason
            signal_group(entry.process.pid, signal.SIGTERM)
        for entry in ended:
            self.stop(entry.id, reason)
        if self.records is not None:
            self.records.closed([_recorded(entry) for entry in ended], reason)
        return ended

    # --- inside ------------------------------------------------------------------------------
    def _wait(
        self,
        entry: BackgroundCommand,
        drained: Callable[[float], object],
        prepared: PreparedCommand,
    ) -> None:
        process = entry.process
        try:
            process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            entry.stopped_by = entry.stopped_by or f"timed out after {self.timeout:g} s"
        # The shell has ended (or timed out): whatever it left in its group goes too.
        _end_group(process)
        drained(DRAIN_GRACE_SECONDS)
        GUARD.untrack(process.pid)
        prepared.finish()
        entry.exit_code = process.returncode
        entry.ended = time.monotonic()
        entry._finished.set()
        self._write_records()
        self._changed(entry)

    def _write_records(self) -> None:
        if self.records is None:
            return
        with contextlib.suppress(OSError):
            self.records.write([_recorded(entry) for entry in self.running()])

    def _changed(self, entry: BackgroundCommand) -> None:
        if self.on_change is not None:
            with contextlib.suppress(Exception):
                self.on_change(entry)


def _recorded(entry: BackgroundCommand) -> RecordedCommand:
    return RecordedCommand(
        id=entry.id,
        command=entry.command,
        group=entry.process.pid,
        started=entry.started_wall,
    )


def _read_output(descriptor: int, entry: BackgroundCommand) -> None:
    """Copy the merged output, secrets masked, into the entry's store until the pipe closes
    or, once the group has ended, the drain grace passes (a process outside the group may
    hold the pipe)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    redactor = StreamRedactor()
    deadline: float | None = None
    try:
        while True:
            ready, _, _ = select.select([descriptor], [], [], 0.2)
            if ready:
                chunk = os.read(descriptor, _READ_SIZE)
                entry.output.add(redactor.feed(decoder.decode(chunk, final=not chunk)))
                if not chunk:
                    break
            elif entry.process.poll() is not None:
                deadline = deadline or time.monotonic() + DRAIN_GRACE_SECONDS
                if time.monotonic() > deadline:
                    break
    except OSError:
        pass
    finally:
        entry.output.add(redactor.flush())
        os.close(descriptor)


def _end_group(process: ProcessView) -> None:
    """SIGTERM the command's group, SIGKILL what is left after a grace, reap the shell."""
    group = process.pid
    if signal_group(group, signal.SIGTERM):
        deadline = time.monotonic() + TERMINATE_GRACE_SECONDS
        while group_alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        signal_group(group, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=TERMINATE_GRACE_SECONDS)


def _before_exec(sandboxed: Callable[[], None] | None) -> Callable[[], None] | None:
    """The parent-death signal (only from the main thread: it fires when the *thread* that
    started the child ends), then the sandbox's work between fork and exec."""
    death_signal = (
        pdeathsig_preexec() if threading.current_thread() is threading.main_thread() else None
    )
    if sandboxed is None:
        return death_signal

    def before_exec() -> None:
        if death_signal is not None:
            death_signal()
        sandboxed()

    return before_exec
