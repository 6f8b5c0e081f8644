"""Stream shapes real servers send, written as raw SSE bytes and served over loopback HTTP.

Each body is cut into small network writes too, so lines, JSON and multi-byte UTF-8
characters arrive split across reads."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from forge.llm.errors import (
    ContextOverflowError,
    LLMError,
    MalformedStreamError,
    RateLimitError,
    StreamError,
    TransportError,
)
from forge.llm.messages import ToolCall, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import (
    Completion,
    MessageDelta,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
    UsageReported,
)
from tests.support.openai_server import OpenAIServer, Raw

SPLITS = [None, 1, 2, 3, 5, 7]
MULTIBYTE = "Grüße — 你好, wörld 🎉🚀 naïve café ∑∫"


def sse(*payloads: dict[str, Any] | str, done: bool = True, newline: str = "\n") -> bytes:
    lines = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        lines.append(f"data: {data}{newline}{newline}")
    if done:
        lines.append(f"data: [DONE]{newline}{newline}")
    return "".join(lines).encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "c", "object": "chat.completion.chunk", "model": "served-model",
            "choices": choices} | extra  # fmt: skip


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider("asked-model", llm_server.base_url, "k", max_retries=0)
    yield instance
    await instance.aclose()


async def run(
    provider: OpenAICompatibleProvider, server: OpenAIServer, body: bytes, split: int | None
) -> tuple[list[StreamEvent], Completion]:
    server.enqueue(Raw(body, split_every=split))
    events = [event async for event in provider.stream([user("hi")])]
    last = events[-1]
    assert isinstance(last, StreamFinished)
    assert sum(isinstance(event, StreamFinished) for event in events) == 1
    return events, last.completion


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
async def test_multibyte_text_and_comment_lines_survive_any_split(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, split: int | None, newline: str
) -> None:
    pieces = [MULTIBYTE[i : i + 3] for i in range(0, len(MULTIBYTE), 3)]
    body = f": OPENROUTER PROCESSING{newline}{newline}".encode() + sse(
        chunk({"role": "assistant", "content": ""}),
        *[chunk({"content": piece}) for piece in pieces],
        chunk({}, "stop"),
        newline=newline,
    )
    body = body.replace(b"data: [DONE]", f": keep-alive{newline}data: [DONE]".encode())
    events, completion = await run(provider, llm_server, body, split)
    assert [e.text for e in events if isinstance(e, MessageDelta)] == pieces
    assert completion.message.content == MULTIBYTE
    assert completion.finish_reason == "stop"
    assert completion.model == "served-model"


@pytest.mark.parametrize("split", SPLITS)
async def test_tool_calls_with_repeated_ids_names_and_empty_follow_ups(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, split: int | None
) -> None:
    def tool(index: int, call_id: str | None, name: str | None, arguments: Any = "missing") -> dict:
        function: dict[str, Any] = {} if name is None else {"name": name}
        if arguments != "missing":
            function["arguments"] = arguments
        call: dict[str, Any] = {"index": index, "type": "function", "function": function}
        if call_id is not None:
            call["id"] = call_id
        return chunk({"tool_calls": [call]})

    body = sse(
        tool(0, "call_A", "read_file"),  # no arguments key at all
        tool(1, "call_B", "grep", None),  # arguments: null
        tool(0, "call_A", "read_file", '{"path": '),  # id and name repeated
        tool(1, "", "grep", '{"pattern": "ü'),  # empty id must not erase call_B
        tool(0, "", "", '"a.py"}'),
        tool(1, None, None, '"}'),
        chunk({}, "stop"),  # no "tool_calls" finish reason at all
    )
    events, completion = await run(provider, llm_server, body, split)
    expected = (
        ToolCall("call_A", "read_file", '{"path": "a.py"}'),
        ToolCall("call_B", "grep", '{"pattern": "ü"}'),
    )
    assert completion.message.tool_calls == expected
    completes = [e for e in events if isinstance(e, ToolCallComplete)]
    assert [(e.index, e.call) for e in completes] == [(0, expected[0]), (1, expected[1])]
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(0, "call_A", "read_file", "")
    assert "".join(d.arguments_delta for d in deltas if d.index == 1) == '{"pattern": "ü"}'
    assert events.index(completes[0]) > events.index(deltas[-1])


async def test_tool_calls_without_index_or_id_still_assemble(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    body = sse(
        chunk({"tool_calls": [{"id": "call_1", "function": {"name": "ls", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"function": {"name": "pwd", "arguments": ""}}]}),
        chunk({}, "tool_calls"),
    )
    _, completion = await run(provider, llm_server, body, None)
    first, second = completion.message.tool_calls
    assert first == ToolCall("call_1", "ls", "{}")
    # A call the server sent without an id gets one, so its result can be paired with it.
    assert second.name == "pwd" and second.id.startswith("call_") and second.arguments == "{}"


@pytest.mark.parametrize("split", [None, 4])
async def test_usage_in_a_content_chunk_or_twice_last_wins(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, split: int | None
) -> None:
    first = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
    last = {
        "prompt_tokens": 10,
        "completion_tokens": 4,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 8},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }
    body = sse(chunk({"content": "hi"}, usage=first), chunk({}, "stop", usage=last))
    events, completion = await run(provider, llm_server, body, split)
    reported = [e.usage for e in events if isinstance(e, UsageReported)]
    assert reported == [Usage(10, 1, 11), Usage(10, 4, 14, cached_tokens=8, reasoning_tokens=2)]
    assert completion.usage == reported[-1]


async def test_reasoning_from_every_field_servers_use(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    details = [{"type": "reasoning.text", "text": "third", "index": 0}]
    body = sse(
        chunk({"reasoning_content": "first "}),
        # OpenRouter repeats the text in reasoning_details: it must not be counted twice.
        chunk({"reasoning": "second ", "reasoning_details": details}),
        chunk({"reasoning_details": details}),
        chunk({"content": "answer"}, "stop"),
    )
    events, completion = await run(provider, llm_server, body, None)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == [
        "first ",
        "second ",
        "third",
    ]
    assert completion.message.reasoning == "first second third"
    assert completion.message.content == "answer"


async def test_only_choice_zero_of_interleaved_choices_is_kept(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    def choice(index: int, text: str, finish: str | None = None) -> dict:
        return {"choices": [{"index": index, "delta": {"content": text}, "finish_reason": finish}]}

    body = sse(choice(0, "zero "), choice(1, "one "), choice(2, "two "), choice(0, "again", "stop"),
               choice(1, "!", "stop"))  # fmt: skip
    _, completion = await run(provider, llm_server, body, None)
    assert completion.message.content == "zero again"


async def test_a_stream_without_done_is_complete_when_it_finished(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    body = sse(chunk({"content": "all here"}), chunk({}, "length"), done=False)
    _, completion = await run(provider, llm_server, body, 3)
    assert completion.message.content == "all here"
    assert completion.finish_reason == "length"


async def test_a_stream_cut_before_any_finish_is_a_transport_error(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Raw(sse(chunk({"content": "half an ans"}), done=False)))
    with pytest.raises(TransportError, match="ended before"):
        _ = [event async for event in provider.stream([user("hi")])]


@pytest.mark.parametrize(
    ("body", "expected", "text"),
    [
        (b'event: error\ndata: {"error": {"message": "Tool call validation failed",'
         b' "code": "tool_use_failed", "status_code": 400}}\n\n',
         StreamError, "Tool call validation failed"),
        (sse(chunk({"content": "x"}), chunk({"content": ""}, error={"code": 400,
             "message": "Token limit reached"})), StreamError, "Token limit reached"),
        (sse({"error": {"message": "This model's maximum context length is 4096 tokens",
                        "code": "context_length_exceeded"}}),
         ContextOverflowError, "maximum context length"),
        (sse({"error": {"message": "Rate limit exceeded: free-models-per-min", "code": 429}}),
         RateLimitError, "free-models-per-min"),
        (b"event: error\ndata: upstream exploded\n\n", StreamError, "upstream exploded"),
        (sse(chunk({"content": "x"}), '{"choices": [{"delta": {"content": "y"'),
         MalformedStreamError, "not JSON"),
    ],
)  # fmt: skip
async def test_errors_inside_a_stream_are_typed(
    provider: OpenAICompatibleProvider,
    llm_server: OpenAIServer,
    body: bytes,
    expected: type[LLMError],
    text: str,
) -> None:
    llm_server.enqueue(Raw(body, split_every=6))
    with pytest.raises(expected, match=text) as caught:
        _ = [event async for event in provider.stream([user("hi")])]
    assert type(caught.value) is expected


async def test_a_server_that_ignores_stream_true_still_streams(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    whole = {
        "model": "served-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Looking.", "reasoning_content": "plan",
            "tool_calls": [{"id": "call_z", "type": "function",
                            "function": {"name": "ls", "arguments": "{}"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }  # fmt: skip
    llm_server.enqueue(Raw(json.dumps(whole).encode(), content_type="application/json"))
    events = [event async for event in provider.stream([user("hi")])]
    assert [type(e).__name__ for e in events] == [
        "ReasoningDelta", "MessageDelta", "ToolCallComplete", "UsageReported", "StreamFinished",
    ]  # fmt: skip
    last = events[-1]
    assert isinstance(last, StreamFinished)
    assert last.completion.message.tool_calls == (ToolCall("call_z", "ls", "{}"),)
    assert last.completion.usage == Usage(3, 2, 5)
