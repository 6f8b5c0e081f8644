"""Join streamed text deltas into small batches before they reach the UI.

A model streams one delta per token (hundreds a second); posting each as its own message
makes the UI do per-token work (dispatch, layout, a markdown append) and fall behind. The turn
worker instead posts what arrived in each `DELTA_BATCH_SECONDS` window as one delta. Any other
event flushes the batch first, so the order of events never changes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator

from forge.agent.events import MessageDelta, ReasoningDelta
from forge.session.events import SessionEvent

DELTA_BATCH_SECONDS = 0.03
"""How long streamed text may wait to be joined with what follows it (about two frames)."""

_Delta = MessageDelta | ReasoningDelta


def _joined(pending: list[_Delta]) -> _Delta:
    kind = type(pending[0])
    return kind("".join(delta.text for delta in pending))


def _read(task: asyncio.Task[SessionEvent]) -> SessionEvent | None:
    """The event a finished read produced (None if it was cancelled, failed or ended)."""
    if not task.done() or task.cancelled() or task.exception() is not None:
        return None
    return task.result()


async def batch_deltas(
    events: AsyncIterator[SessionEvent],
    *,
    interval: float = DELTA_BATCH_SECONDS,
    unsent: list[SessionEvent] | None = None,
) -> AsyncGenerator[SessionEvent, None]:
    """Yield `events` in order, with runs of answer (or reasoning) deltas joined.

    A batch is yielded once `interval` seconds have passed since its first delta, when an
    event of another kind arrives, or when `events` ends. If the consumer stops or is
    cancelled, the pending read of `events` is cancelled, which stops the source where it is,
    and the batch not yet yielded goes to `unsent` (the agent kept that text in the
    conversation, so the chat must show it too), followed by an event the read had already
    produced.
    """
    pending: list[_Delta] = []
    started = 0.0
    next_event: asyncio.Task[SessionEvent] | None = None
    try:
        while True:
            if next_event is None:
                next_event = asyncio.ensure_future(anext(events))
            timeout = None
            if pending:
                timeout = max(0.0, started + interval - time.monotonic())
            done, _ = await asyncio.wait({next_event}, timeout=timeout)
            if not done:  # the window closed with no new event: send what waits
                yield _joined(pending)
                pending.clear()
                continue
            task, next_event = next_event, None
            try:
                event = task.result()
            except StopAsyncIteration:
                break
            if isinstance(event, MessageDelta | ReasoningDelta):
                if pending and type(pending[0]) is not type(event):
                    yield _joined(pending)
                    pending.clear()
                if not pending:
                    started = time.monotonic()
                pending.append(event)
                if time.monotonic() - started >= interval:
                    yield _joined(pending)
                    pending.clear()
                continue
            if pending:
                yield _joined(pending)
                pending.clear()
            yield event
        if pending:
            yield _joined(pending)
    finally:
        if pending and unsent is not None:
            unsent.append(_joined(pending))
        if next_event is not None and not next_event.done():
            next_event.cancel()
            await asyncio.wait({next_event})
        late = _read(next_event) if next_event is not None else None
        if unsent is not None and late is not None:
            # Read from the source but not yet taken when the consumer stopped: the agent
            # has it (a delta is in the kept partial answer), so the chat must show it too.
            unsent.append(late)
