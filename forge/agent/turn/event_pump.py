"""Forward events that a running task emits through a queue, in order, while it runs.

The context manager's event sink and a command's output callback are synchronous; they put
events on a queue. The agent runs the work as a task and yields what the queue receives as it
arrives, so summarization progress and command output reach the client live, not at the end.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, Generic, TypeVar

EventT = TypeVar("EventT")


class EventPump(Generic[EventT]):
    """A queue synchronous callbacks `put` into, and an async view of it while work runs."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[EventT] = asyncio.Queue()

    def put(self, event: EventT) -> None:
        """Queue an event; never blocks (usable as an event sink or output callback)."""
        self._queue.put_nowait(event)

    def drain(self) -> list[EventT]:
        """Everything queued so far, oldest first, removed from the queue."""
        events: list[EventT] = []
        while not self._queue.empty():
            events.append(self._queue.get_nowait())
        return events

    async def while_running(self, task: asyncio.Future[Any]) -> AsyncGenerator[EventT, None]:
        """Yield queued events until `task` is done, then whatever is left.

        The task's result (or exception) stays in `task` for the caller. If the consumer stops
        early or is cancelled, the task is cancelled and awaited, so the work it started (a
        command's process group, an HTTP request) is cleaned up before this returns.
        """
        try:
            while not task.done():
                getter = asyncio.ensure_future(self._queue.get())
                try:
                    await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not getter.done():
                        getter.cancel()
                if getter.done() and not getter.cancelled():
                    yield getter.result()
            for event in self.drain():
                yield event
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait({task})
