"""Streamed deltas reach the UI in batches: joined while they keep coming, sent when the
window closes even if the stream then stalls, and never reordered around other events."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from forge.agent.events import AgentEvent, MessageDelta, ReasoningDelta, ToolOutputDelta
from forge.tui.delta_batching import batch_deltas


async def _source(
    events: list[AgentEvent], stall: asyncio.Event | None = None
) -> AsyncIterator[AgentEvent]:
    for event in events:
        yield event
    if stall is not None:
        await stall.wait()


async def test_deltas_arriving_together_are_joined_and_other_events_keep_their_place() -> None:
    events: list[AgentEvent] = [
        ReasoningDelta("think "),
        ReasoningDelta("more"),
        MessageDelta("Hel"),
        MessageDelta("lo "),
        MessageDelta("world"),
        ToolOutputDelta("c1", "out"),
        MessageDelta("!"),
    ]
    batched = [event async for event in batch_deltas(_source(events), interval=60.0)]
    assert batched == [
        ReasoningDelta("think more"),
        MessageDelta("Hello world"),
        ToolOutputDelta("c1", "out"),
        MessageDelta("!"),
    ]


async def test_a_batch_is_sent_when_its_window_closes_even_if_the_stream_stalls() -> None:
    stall = asyncio.Event()
    received: list[AgentEvent] = []
    arrived = asyncio.Event()
    batches = batch_deltas(_source([MessageDelta("a"), MessageDelta("b")], stall), interval=0.01)

    async def consume() -> None:
        async for event in batches:
            received.append(event)
            arrived.set()

    task = asyncio.create_task(consume())
    # The source now waits forever; the joined text must still arrive.
    await asyncio.wait_for(arrived.wait(), timeout=20)
    assert received == [MessageDelta("ab")]
    stall.set()
    await task


async def test_cancelling_the_consumer_stops_the_source() -> None:
    stopped = asyncio.Event()
    forever = asyncio.Event()

    async def source() -> AsyncIterator[AgentEvent]:
        try:
            yield MessageDelta("x")
            await forever.wait()
        finally:
            stopped.set()

    async def consume() -> None:
        async for _ in batch_deltas(source(), interval=0.01):
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert stopped.is_set()


async def test_a_batch_still_waiting_when_the_consumer_is_cancelled_goes_to_unsent() -> None:
    forever = asyncio.Event()
    reached = asyncio.Event()

    async def source() -> AsyncIterator[AgentEvent]:
        yield MessageDelta("kept ")
        yield MessageDelta("text")
        reached.set()
        await forever.wait()

    unsent: list[AgentEvent] = []
    received: list[AgentEvent] = []

    async def consume() -> None:
        async with contextlib.aclosing(
            batch_deltas(source(), interval=60.0, unsent=unsent)
        ) as batches:
            async for event in batches:
                received.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(reached.wait(), timeout=20)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert received == []  # the window (60 s) never closed
    assert unsent == [MessageDelta("kept text")]


async def test_an_event_read_but_not_yet_taken_when_the_consumer_is_cancelled_goes_to_unsent() -> (
    None
):
    # The source has produced "b" (the agent kept it in the partial answer) and the read is
    # done, but the consumer is cancelled before it wakes to take it: "b" must not be lost.
    gate = asyncio.Event()
    produced = asyncio.Event()

    async def source() -> AsyncIterator[AgentEvent]:
        yield MessageDelta("a")
        await gate.wait()
        produced.set()
        yield MessageDelta("b")
        await asyncio.Event().wait()

    unsent: list[AgentEvent] = []

    async def consume() -> None:
        async with contextlib.aclosing(
            batch_deltas(source(), interval=60.0, unsent=unsent)
        ) as batches:
            async for _ in batches:
                pass

    task = asyncio.create_task(consume())
    for _ in range(20):
        await asyncio.sleep(0)  # "a" is read and waits in the batch; the next read waits
    gate.set()
    # Woken by `produced` in the same step that finishes the read, before the consumer is.
    await produced.wait()
    task.cancel()  # "b" has been read; the consumer has not run since
    await asyncio.gather(task, return_exceptions=True)
    assert "".join(e.text for e in unsent if isinstance(e, MessageDelta)) == "ab"
