"""The OpenAI-compatible provider against the real loopback server: streaming, whole replies,
tool calls, request shape and clones."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from forge.llm.messages import Message, ToolCall, assistant, system, tool_result, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.protocols import ModelCloner, Provider, ToolSpec
from forge.llm.stream import (
    MessageDelta,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    ToolCallComplete,
    ToolCallDelta,
    UsageReported,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file in the workspace.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider(
        "main-model", llm_server.base_url, "sk-test-key", backoff_base=0.001
    )
    yield instance
    await instance.aclose()


async def collect(
    provider: Provider, messages: list[Message], **kwargs: object
) -> list[StreamEvent]:
    return [event async for event in provider.stream(messages, **kwargs)]  # type: ignore[arg-type]


def finished(events: list[StreamEvent]) -> StreamFinished:
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return last


async def test_provider_satisfies_both_protocols(provider: OpenAICompatibleProvider) -> None:
    assert isinstance(provider, Provider)
    assert isinstance(provider, ModelCloner)
    assert provider.model == "main-model"


async def test_streams_text_and_finishes_with_the_whole_message(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Text("Hello there, world!", reasoning="think first", chunk_size=5, prompt_tokens=11)
    )
    events = await collect(provider, [system("be brief"), user("hi")])

    texts = [event.text for event in events if isinstance(event, MessageDelta)]
    assert texts == ["Hello", " ther", "e, wo", "rld!"]
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    assert reasoning == "think first"
    completion = finished(events).completion
    assert completion.message.role == "assistant"
    assert completion.message.content == "Hello there, world!"
    assert completion.message.reasoning == "think first"
    assert completion.finish_reason == "stop"
    assert completion.model == "main-model"
    assert completion.usage is not None and completion.usage.prompt_tokens == 11
    assert any(isinstance(event, UsageReported) for event in events)


async def test_request_has_the_wire_shape(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    call = ToolCall("call_9", "read_file", '{"path": "a.py"}')
    history = [user("read a.py"), assistant("", (call,)), tool_result(call, "print(1)")]
    await collect(provider, history, tools=[READ_FILE], max_tokens=64)

    request = llm_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.stream is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert request.body["max_tokens"] == 64
    assert request.messages == [message.to_api() for message in history]
    assert request.tools == [READ_FILE.to_api()]
    assert request.headers["authorization"] == "Bearer sk-test-key"
    assert request.headers["x-title"] == "Forge"


async def test_no_authorization_header_without_a_key(llm_server: OpenAIServer) -> None:
    async with OpenAICompatibleProvider("local", llm_server.base_url, "") as local:
        await collect(local, [user("hi")])
    assert "authorization" not in llm_server.requests[0].headers


async def test_assembles_parallel_tool_calls_in_index_order(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("read_file", {"path": "a.py"}, id="call_a"),
                Call("grep", {"pattern": "def main", "path": "."}, id="call_b"),
            ],
            text="Let me look.",
            chunk_size=4,
        )
    )
    events = await collect(provider, [user("look")], tools=[READ_FILE])

    deltas = [event for event in events if isinstance(event, ToolCallDelta)]
    assert {delta.index for delta in deltas} == {0, 1}
    completes = [event for event in events if isinstance(event, ToolCallComplete)]
    assert [event.index for event in completes] == [0, 1]
    assert completes[0].call == ToolCall("call_a", "read_file", json.dumps({"path": "a.py"}))
    assert completes[1].call.name == "grep"
    assert completes[1].call.parsed_arguments() == {"pattern": "def main", "path": "."}
    # The completes come after every delta and right before the end.
    assert events.index(completes[0]) > events.index(deltas[-1])
    message = finished(events).completion.message
    assert message.content == "Let me look."
    assert message.tool_calls == (completes[0].call, completes[1].call)
    assert finished(events).completion.finish_reason == "tool_calls"


async def test_complete_returns_a_whole_message(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Text("whole answer", reasoning="hmm", prompt_tokens=7, completion_tokens=3),
        ToolCalls([Call("read_file", {"path": "b.py"}, id="call_x")]),
    )
    completion = await provider.complete([user("hi")])
    assert completion.message.content == "whole answer"
    assert completion.message.reasoning == "hmm"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (7, 3)
    assert completion.usage.total_tokens == 10
    assert llm_server.requests[0].stream is False
    assert "stream_options" not in llm_server.requests[0].body

    with_tools = await provider.complete([user("read b")], tools=[READ_FILE])
    assert with_tools.message.tool_calls == (
        ToolCall("call_x", "read_file", json.dumps({"path": "b.py"})),
    )
    assert with_tools.finish_reason == "tool_calls"


async def test_clone_shares_client_and_changes_only_the_model(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    clone = provider.clone_with_model("summary-model")
    assert clone._client is provider._client
    assert clone.model == "summary-model"
    assert provider.model == "main-model"
    assert clone.base_url == provider.base_url

    await collect(clone, [user("summarize")])
    await collect(provider, [user("main")])
    assert [request.model for request in llm_server.requests] == ["summary-model", "main-model"]
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test-key"

    # Closing a clone leaves the shared client usable; closing the owner closes it.
    await clone.aclose()
    assert not provider._client.is_closed
    await collect(provider, [user("still works")])


async def test_owner_closes_its_own_client_but_not_a_given_one(llm_server: OpenAIServer) -> None:
    owner = OpenAICompatibleProvider("m", llm_server.base_url, "k")
    await owner.aclose()
    assert owner._client.is_closed

    shared = httpx.AsyncClient()
    borrower = OpenAICompatibleProvider("m", llm_server.base_url, "k", client=shared)
    await borrower.aclose()
    assert not shared.is_closed
    await collect(borrower, [user("hi")])
    await shared.aclose()


async def test_clones_stream_concurrently_over_the_shared_client(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    # The context manager summarizes tool-call groups in parallel through clones.
    llm_server.responder = lambda request: Text(f"summary by {request.model}", delay=0.3)
    clones = [provider.clone_with_model(f"summarizer-{n}") for n in range(3)]

    async def final(clone: OpenAICompatibleProvider) -> str:
        events = await collect(clone, [user("summarize")])
        return finished(events).completion.message.content

    results = await asyncio.gather(*(final(clone) for clone in clones))
    assert results == [f"summary by summarizer-{n}" for n in range(3)]
    assert llm_server.max_active == 3
