"""The tokenizer loads on first use, and in a worker thread when the event loop asks, so a
session is ready for a task before it is in (docs/adr/0042): a counter is made without its
encoding, `count_ahead` builds it off the loop and counts a long history there, and the
context manager counts the tool definitions when the prompt is measured, not when set."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
import tiktoken

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.manager import Manager
from forge.llm.messages import Message, assistant, user
from forge.llm.protocols import ToolSpec
from forge.llm.text_segments import SEGMENT_CHARACTERS
from forge.llm.tokenizer import (
    TiktokenCounter,
    encoding_loaded,
    forget_encodings,
    get_encoding,
)
from tests.context.builders import provider_for
from tests.support.openai_server import OpenAIServer


@pytest.fixture
def unloaded() -> Iterator[None]:
    """No encoding built yet in this process, as at start-up."""
    forget_encodings()
    yield


def history(rounds: int, characters: int) -> list[Message]:
    """A resumed session's history: `rounds` question/answer pairs of `characters` each."""
    messages: list[Message] = []
    for number in range(rounds):
        messages.append(user(f"question {number}: " + "why " * (characters // 4)))
        messages.append(assistant(f"answer {number}: " + "because " * (characters // 8)))
    return messages


def test_a_counter_builds_its_encoding_only_when_it_counts(unloaded: None) -> None:
    counter = TiktokenCounter("gpt-4o")

    assert counter.encoding_name == "o200k_base"
    assert not counter.loaded and not encoding_loaded("o200k_base")
    assert counter.count_text("hello world") == 2
    assert counter.loaded


async def test_count_ahead_builds_the_encoding_while_the_event_loop_runs(unloaded: None) -> None:
    counter = TiktokenCounter("gpt-4o")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0)
    started = ticks
    await counter.count_ahead([user("hello")])
    ticker.cancel()

    assert counter.loaded
    assert ticks > started + 1  # the loop went on while the encoding was built


def test_threads_asking_at_once_share_one_encoding(unloaded: None) -> None:
    built: list[tiktoken.Encoding] = []
    threads = [
        threading.Thread(target=lambda: built.append(get_encoding("cl100k_base"))) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(built) == 3 and all(encoding is built[0] for encoding in built)
    assert built[0].encode("hello world") == [15339, 1917]


async def test_a_long_history_is_counted_ahead_with_the_counts_it_would_get_on_the_loop() -> None:
    messages = history(200, 2_000)
    assert sum(len(message.content) for message in messages) > 2 * SEGMENT_CHARACTERS
    counter = TiktokenCounter("gpt-4o")

    await counter.count_ahead(messages)

    assert counter.cached_message_count == len(messages)
    assert counter.count_messages(messages) == TiktokenCounter("gpt-4o").count_messages(messages)
    assert counter.cache_misses == 0  # every count came from the ahead-of-time counting


async def test_a_short_history_is_left_to_be_counted_when_asked() -> None:
    messages = history(2, 100)
    counter = TiktokenCounter("gpt-4o")

    await counter.count_ahead(messages)

    assert counter.cached_message_count == 0


async def test_tool_definitions_are_counted_when_the_prompt_is_measured(
    unloaded: None, llm_server: OpenAIServer
) -> None:
    specs = [
        ToolSpec(
            name="read_file",
            description="Read a file of the workspace.",
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        )
    ]
    counter = TiktokenCounter("gpt-4o")
    async with provider_for(llm_server) as provider:
        manager = Manager(ContextSettings(), provider, counter, context_window=100_000)
        manager.set_tools(specs)
        assert not counter.loaded  # setting them built nothing

        chat = Conversation()
        chat.append(user("hello"))
        measured = manager.current_tokens(chat)

    tools = counter.count_tools(specs)
    assert tools > 0 and manager.tool_tokens == tools
    assert measured == counter.count_messages(chat.messages) + tools
