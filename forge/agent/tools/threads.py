"""Blocking tool work off the event loop, in a thread that can never keep Forge alive.

`asyncio.to_thread` uses the loop's default executor, whose threads `asyncio.run` joins on
the way out and Python joins at exit: one stuck call (a read that never returns) would keep
the process alive after its turn ended. `run_in_daemon_thread` starts a daemon thread per
call instead. Cancelling the await returns at once; the thread's late result is dropped, and
the thread dies with the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def run_in_daemon_thread(function: Callable[..., T], *arguments: object) -> T:
    """`function(*arguments)` in a new daemon thread; its result or exception, awaited."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(result: T | None, error: BaseException | None) -> None:
        if future.done():  # the caller was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)  # type: ignore[arg-type]

    def target() -> None:
        result: T | None = None
        error: BaseException | None = None
        try:
            result = function(*arguments)
        except BaseException as exception:
            error = exception
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(deliver, result, error)

    name = f"forge-tool-{getattr(function, '__name__', 'call')}"
    threading.Thread(target=target, name=name, daemon=True).start()
    return await future
