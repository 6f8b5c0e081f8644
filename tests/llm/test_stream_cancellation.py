"""Stopping a stream closes its HTTP response promptly and leaves the provider usable."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import MessageDelta, StreamFinished
from tests.support.openai_server import OpenAIServer, Text

LONG_SLOW_REPLY = Text("word " * 400, chunk_size=5, chunk_delay=0.02)
"""About eight seconds of streaming: far longer than a prompt close needs."""


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider("m", llm_server.base_url, "k", max_retries=0)
    yield instance
    await instance.aclose()


async def wait_for_server_to_see_cancellation(server: OpenAIServer) -> None:
    """Poll until the server notices the client left; bounded so a regression fails."""
    for _ in range(300):
        if server.cancelled_streams:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the server never saw the stream being closed")


async def assert_still_usable(provider: OpenAICompatibleProvider, server: OpenAIServer) -> None:
    server.enqueue(Text("next turn"))
    events = [event async for event in provider.stream([user("again")])]
    last = events[-1]
    assert isinstance(last, StreamFinished)
    assert last.completion.message.content == "next turn"


async def test_cancelling_the_consumer_closes_the_response(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(LONG_SLOW_REPLY)
    first_text = asyncio.Event()
    received: list[str] = []

    async def consume() -> None:
        async for event in provider.stream([user("write a lot")]):
            if isinstance(event, MessageDelta):
                received.append(event.text)
                first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_for_server_to_see_cancellation(llm_server)
    assert llm_server.cancelled_streams == 1
    assert len(received) < 400
    await assert_still_usable(provider, llm_server)


async def test_closing_the_stream_generator_closes_the_response(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(LONG_SLOW_REPLY)
    stream = provider.stream([user("write a lot")])
    async for event in stream:
        if isinstance(event, MessageDelta):
            break
    await stream.aclose()
    await wait_for_server_to_see_cancellation(llm_server)
    assert llm_server.cancelled_streams == 1
    await assert_still_usable(provider, llm_server)


async def test_a_clone_cancelled_mid_stream_leaves_the_shared_client_working(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    clone = provider.clone_with_model("summarizer")
    llm_server.enqueue(LONG_SLOW_REPLY)
    stream = clone.stream([user("summarize")])
    async for event in stream:
        if isinstance(event, MessageDelta):
            break
    await stream.aclose()
    await wait_for_server_to_see_cancellation(llm_server)
    await assert_still_usable(provider, llm_server)
