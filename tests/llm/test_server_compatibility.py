"""How Forge's provider copes with real servers' habits (issue 12, docs/adr/0019), against the
loopback server made to behave like each: captured bytes where a capture exists, scripted
responses where none does (LitServe's zero usage and unterminated error event)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from forge.llm.errors import (
    ContextOverflowError,
    MalformedStreamError,
    RateLimitError,
    StreamError,
)
from forge.llm.messages import ToolCall, assistant, tool_result, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.protocols import ToolSpec
from forge.llm.stream import StreamEvent, StreamFinished, Usage
from tests.support.openai_server import Call, OpenAIServer, Raw, Replay, Text, ToolCalls
from tests.support.real_servers import (
    OVERFLOW_400,
    OVERFLOW_EMPTY_STREAM,
    UNTERMINATED_ERROR_STREAM,
    litellm_capture,
    litserve_like,
    llama_cpp_python,
)

WRITE_FILE = ToolSpec("write_file", "Write a file", {"type": "object"})


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider("tiny", llm_server.base_url, "", max_retries=4)
    yield instance
    await instance.aclose()


async def finished(provider: OpenAICompatibleProvider, **kwargs: object) -> StreamFinished:
    events: list[StreamEvent] = [
        event
        async for event in provider.stream(
            kwargs.get("messages", [user("hi")]),  # type: ignore[arg-type]
            kwargs.get("tools"),  # type: ignore[arg-type]
        )
    ]
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return last


# --- 1. content "" beside tool calls ----------------------------------------------------------


def test_an_assistant_message_with_only_tool_calls_is_sent_with_empty_content() -> None:
    message = assistant("", (ToolCall("call_1", "write_file", "{}"),))
    assert message.to_api()["content"] == ""


async def test_the_second_request_of_a_tool_turn_is_accepted_by_llama_cpp_python(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llama_cpp_python(llm_server)
    call = ToolCall("call_1", "write_file", '{"path": "a"}')
    history = [user("write a"), assistant("", (call,)), tool_result(call, "ok")]
    llm_server.enqueue(Text("Written."))
    last = await finished(provider, messages=history, tools=[WRITE_FILE])
    assert last.completion.message.content == "Written."
    assert len(llm_server.requests) == 1  # no 500, no retries


# --- 2. an empty 200 stream ---------------------------------------------------------------------


async def test_an_empty_stream_is_asked_again_whole_and_the_overflow_it_states_is_raised(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llama_cpp_python(llm_server)
    with pytest.raises(ContextOverflowError) as caught:
        await finished(provider, messages=[user("word " * 12_000)])
    assert caught.value.context_window == 2048
    # One streamed request (empty), one whole one (the real error): not five transport retries.
    assert [request.stream for request in llm_server.requests] == [True, False]


async def test_an_empty_stream_whose_whole_answer_is_a_reply_shows_that_reply(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Replay(OVERFLOW_EMPTY_STREAM), Text("Here it is."))
    last = await finished(provider)
    assert last.completion.message.content == "Here it is."


async def test_the_whole_overflow_answer_states_the_window(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Replay(OVERFLOW_400))
    with pytest.raises(ContextOverflowError) as caught:
        await provider.complete([user("hi")])
    assert caught.value.context_window == 2048
    assert caught.value.status == 400


# --- 3. tool_choice -------------------------------------------------------------------------


async def test_tool_choice_auto_is_sent_with_tools_and_only_with_tools(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    await finished(provider, tools=[WRITE_FILE])
    await finished(provider)
    with_tools, without_tools = llm_server.requests
    assert with_tools.body["tool_choice"] == "auto"
    assert "tool_choice" not in without_tools.body


async def test_llama_cpp_python_emits_tool_calls_because_tool_choice_is_sent(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llama_cpp_python(llm_server)
    llm_server.enqueue(ToolCalls([Call("write_file", {"path": "a"})]))
    last = await finished(provider, tools=[WRITE_FILE])
    assert [call.name for call in last.completion.message.tool_calls] == ["write_file"]


async def test_tool_choice_can_be_switched_off(llm_server: OpenAIServer) -> None:
    llama_cpp_python(llm_server)
    llm_server.enqueue(ToolCalls([Call("write_file", {"path": "a"})]))
    async with OpenAICompatibleProvider(
        "tiny", llm_server.base_url, "", tool_choice=""
    ) as provider:
        last = await finished(provider, tools=[WRITE_FILE])
    assert "tool_choice" not in llm_server.requests[0].body
    # What llama-cpp-python does without it: the call comes back as plain text.
    assert last.completion.message.tool_calls == ()
    assert "write_file" in last.completion.message.content


async def test_a_server_rejecting_tool_choice_is_asked_again_without_it_and_remembered(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.reject_tool_choice = True
    llm_server.enqueue(Text("one"), Text("two"))
    first = await finished(provider, tools=[WRITE_FILE])
    second = await provider.complete([user("again")], [WRITE_FILE])
    assert first.completion.message.content == "one"
    assert second.message.content == "two"
    assert ["tool_choice" in request.body for request in llm_server.requests] == [
        True,
        False,
        False,
    ]


# --- 4. usage that cannot be trusted --------------------------------------------------------


async def test_all_zero_usage_is_reported_as_no_usage(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    litserve_like(llm_server)
    assert (await finished(provider)).completion.usage is None
    assert (await provider.complete([user("hi")])).usage is None


async def test_no_usage_at_all_is_reported_as_no_usage(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llama_cpp_python(llm_server)
    assert (await finished(provider)).completion.usage is None


async def test_a_later_zero_usage_does_not_erase_a_real_one(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    chunk = '{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]'
    llm_server.enqueue(
        Raw(
            f'data: {chunk},"usage":{{"prompt_tokens":364,"completion_tokens":2}}}}\n\n'
            'data: {"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0}}\n\n'
            "data: [DONE]\n\n".encode()
        )
    )
    assert (await finished(provider)).completion.usage == Usage(364, 2, 366)


# --- 5. an error event with no closing blank line --------------------------------------------


@pytest.mark.parametrize("split", [None, 3])
async def test_an_unterminated_error_event_reaches_the_user(
    llm_server: OpenAIServer, split: int | None
) -> None:
    llm_server.enqueue(Raw(UNTERMINATED_ERROR_STREAM, split_every=split))
    async with OpenAICompatibleProvider("m", llm_server.base_url, "", max_retries=0) as provider:
        with pytest.raises(StreamError, match="CUDA out of memory while decoding") as caught:
            await finished(provider)
    assert caught.value.status == 500


async def test_an_unterminated_last_chunk_is_read(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Raw(
            b'data: {"choices":[{"index":0,"delta":{"content":"all"}}]}\r\n\r\n'
            b'data: {"choices":[{"index":0,"delta":{"content":" here"},"finish_reason":"stop"}]}'
        )
    )
    assert (await finished(provider)).completion.message.content == "all here"


# --- 6. error kinds and tool-argument wording ------------------------------------------------


async def test_litellm_in_stream_throttling_error_is_rate_limited(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Replay(litellm_capture("midstream-429-after-text.sse")))
    with pytest.raises(RateLimitError, match="scripted rate limit") as caught:
        await finished(provider)
    assert caught.value.status == 429


async def test_a_stream_line_that_is_not_json_reads_without_a_doubled_word(
    llm_server: OpenAIServer,
) -> None:
    llm_server.enqueue(Raw(b'data: {"a": "b\x01"}\n\ndata: {"a": "unfinished\n\n'))
    async with OpenAICompatibleProvider("m", llm_server.base_url, "", max_retries=0) as provider:
        with pytest.raises(MalformedStreamError) as caught:
            await finished(provider)
    # The raw control character is forgiven; the unfinished string is not.
    assert "Unterminated string starting at 6" in str(caught.value)
    assert "at at" not in str(caught.value)


def test_tool_arguments_parse_leniently_but_refuse_what_is_not_json() -> None:
    assert ToolCall("c", "write_file", '{"content": "a\tb\x01"}').parsed_arguments() == {
        "content": "a\tb\x01"
    }
    with pytest.raises(ValueError, match="not valid JSON: Expecting value at 0"):
        ToolCall("c", "write_file", "write it please").parsed_arguments()
    with pytest.raises(ValueError) as caught:
        ToolCall("c", "write_file", '{"content": "unfinished').parsed_arguments()
    assert "at at" not in str(caught.value)
