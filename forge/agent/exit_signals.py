"""SIGINT, SIGTERM and SIGHUP end Forge the same way (docs/adr/0021).

Whichever arrives — Ctrl+C, `timeout(1)` or a CI runner's SIGTERM, a closed terminal's SIGHUP —
the running command's process group is killed, the turn is cancelled (the session file records
the cancellation; every record is flushed as written) and Forge exits with `128 + signal
number`: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, as shells report a signal death.

A signal that was ignored when Forge started (`nohup forge run …` ignores SIGHUP) stays
ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

from forge.agent.tools.process_guard import GUARD

EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that end a turn and Forge."""


def exit_code_for(signal_number: int) -> int:
    """The exit status for ending on `signal_number`: 128 plus its number."""
    return 128 + signal_number


def signal_name(signal_number: int) -> str:
    """E.g. "SIGTERM"."""
    try:
        return signal.Signals(signal_number).name
    except ValueError:
        return f"signal {signal_number}"


def _not_ignored() -> list[signal.Signals]:
    return [number for number in EXIT_SIGNALS if signal.getsignal(number) != signal.SIG_IGN]


def cancel_task_on_signals(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[object], received: list[int]
) -> None:
    """On any exit signal, append its number to `received` and cancel `task` (for `forge run`:
    cancelling the turn kills the command's group through `execute_command`)."""

    def stop(number: int) -> None:
        received.append(number)
        task.cancel()

    for number in _not_ignored():
        loop.add_signal_handler(number, stop, int(number))


FORCED_EXIT_GRACE_SECONDS = 15.0
"""How long an orderly exit after a signal may take before the process ends itself (the
config watcher's thread alone can hold the loop's shutdown for up to 5 s)."""


def exit_after_grace(code: int, grace: float = FORCED_EXIT_GRACE_SECONDS) -> threading.Timer:
    """End the process with `code` in `grace` seconds unless it has ended by then.

    The orderly exit after a signal can hang where Forge cannot reach it: when the terminal
    is gone (SIGHUP on a closed window), Textual's output thread dies on the first failed
    write and the next writes wait forever for room in its queue. A daemon timer thread still
    runs then; it kills the command groups and leaves with `os._exit` (the session file is
    written as it goes, so nothing is lost)."""

    def force() -> None:
        GUARD.kill_all_now()
        os._exit(code)

    timer = threading.Timer(grace, force)
    timer.daemon = True
    timer.start()
    return timer


@contextlib.contextmanager
def exit_on_signals(
    loop: asyncio.AbstractEventLoop, on_signal: Callable[[int], None]
) -> Iterator[list[int]]:
    """While inside, an exit signal kills every live command group at once and calls
    `on_signal(number)` on `loop` (for the TUI: exit the app). Yields the list of signal
    numbers received; the handlers are removed on leaving.

    The handlers are the loop's (`add_signal_handler`), which also wakes the loop when the
    signal lands on another thread: a plain `signal.signal` handler would wait for the main
    thread's next event, which may never come while a command runs.
    """
    received: list[int] = []

    def handle(number: int) -> None:
        received.append(number)
        GUARD.kill_all_now()
        on_signal(number)

    installed = _not_ignored()
    for number in installed:
        loop.add_signal_handler(number, handle, int(number))
    try:
        yield received
    finally:
        for number in installed:
            loop.remove_signal_handler(number)
