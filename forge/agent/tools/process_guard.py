"""No command outlives Forge, however Forge ends (docs/adr/0021-process-lifetime-and-signals.md).

`execute_command` runs each command as the leader of its own process group and ends that group
when the call ends. Two things here cover the cases where Forge itself ends first:

- `pdeathsig_preexec` makes the kernel send SIGKILL to the command's shell when the Forge
  thread that started it dies, even by `kill -9` (Linux `PR_SET_PDEATHSIG`). It reaches only
  the shell, not what the shell started, hence:
- `ProcessGroupGuard`, a tiny watchdog process started once per Forge process, whose stdin is
  a pipe only Forge writes to. Forge tells it which command groups are live; when the pipe
  reaches end of file — Forge exited, crashed or was killed with SIGKILL — the watchdog sends
  SIGKILL to every group still live and exits. It ignores SIGINT, SIGTERM and SIGHUP and runs
  in its own session, so the terminal's signals do not end it before it has done its job.

`kill_all_now` is for signal handlers: SIGKILL to every live command group at once. The groups
it kills are marked `killed_for_exit`, so the call that ran the command ends as cancelled (the
turn is being cancelled for the exit) instead of recording the kill as the command's own
"[exit code -9]": the cancellation's record must not depend on which of the two the event loop
happens to run first (docs/adr/0021, addendum).

A process that calls `setsid` itself leaves its group and is not tracked: it may survive.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
"""`prctl(2)` option: the signal this process gets when its parent thread dies."""

WATCHDOG_SOURCE = r"""
import os, signal, sys
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP):
    signal.signal(number, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    verb, _, value = line.strip().partition(" ")
    if not value.isdigit():
        continue
    if verb == "add":
        groups.add(int(value))
    elif verb == "remove":
        groups.discard(int(value))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""
"""The watchdog's whole program: track groups from stdin, SIGKILL the live ones at EOF."""


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _load_prctl()
"""Looked up once, in the parent: the child between fork and exec must only call it."""


def pdeathsig_preexec() -> Callable[[], None] | None:
    """A `preexec_fn` that makes the child get SIGKILL when this thread dies, or None where
    the platform has no `PR_SET_PDEATHSIG`.

    If the parent is already gone by the time the child runs it, the child exits at once.
    """
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def set_parent_death_signal() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)

    return set_parent_death_signal


class ProcessGroupGuard:
    """The live command groups of this process, and the watchdog that outlives it.

    The watchdog is started on the first `track`. If it cannot be started, commands still run
    (and still end with their call); only the kill -9 protection is missing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self._killed_for_exit: set[int] = set()
        self._watchdog: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()

    @property
    def live_groups(self) -> frozenset[int]:
        """The process groups of commands running now."""
        with self._lock:
            return frozenset(self._groups)

    def track(self, group: int) -> None:
        """A command's process group started; the watchdog will end it if Forge dies."""
        with self._lock:
            self._groups.add(group)
            self._send(f"add {group}\n")

    def untrack(self, group: int) -> None:
        """A command's process group ended (its number may be reused from now on)."""
        with self._lock:
            self._groups.discard(group)
            self._killed_for_exit.discard(group)
            self._send(f"remove {group}\n")

    def kill_all_now(self) -> None:
        """SIGKILL every live command group (for a signal handler: Forge is exiting). Each
        group is marked `killed_for_exit` before its signal is sent."""
        with self._lock:
            groups = frozenset(self._groups)
            self._killed_for_exit |= groups
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)

    def killed_for_exit(self, group: int) -> bool:
        """Whether `kill_all_now` killed `group` (Forge is exiting): its command did not end
        by itself, and its call must be recorded as cancelled, not with the kill's exit code.
        Ask before `untrack`, which forgets it."""
        with self._lock:
            return group in self._killed_for_exit

    def _send(self, line: str) -> None:
        watchdog = self._ensure_watchdog()
        if watchdog is None or watchdog.stdin is None:
            return
        try:
            watchdog.stdin.write(line.encode())
            watchdog.stdin.flush()
        except OSError:
            self._watchdog = None

    def _ensure_watchdog(self) -> subprocess.Popen[bytes] | None:
        if os.getpid() != self._owner:
            # A forked copy of Forge must not share (and close) the parent's watchdog pipe.
            self._owner, self._watchdog = os.getpid(), None
        if self._watchdog is not None and self._watchdog.poll() is None:
            return self._watchdog
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", WATCHDOG_SOURCE],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self._watchdog = None
            return None
        for group in self._groups:
            with contextlib.suppress(OSError):
                assert self._watchdog.stdin is not None
                self._watchdog.stdin.write(f"add {group}\n".encode())
        return self._watchdog


GUARD = ProcessGroupGuard()
"""The one guard of this process; `execute_command` registers every command group with it."""
