"""The Anthropic Messages provider against the loopback Messages API server: streaming text,
thinking blocks round-tripped with their signatures, tool use (parallel calls, results,
errors), usage with cache tokens, and every error kind mapped to Forge's (docs/adr/0037)."""

from __future__ import annotations

import pytest

from forge.llm.anthropic_provider import AnthropicProvider
from forge.llm.anthropic_wire import THINKING_META_KEY
from forge.llm.errors import (
    AuthenticationError,
    ContextOverflowError,
    RateLimitError,
    ServerError,
    StreamError,
)
from forge.llm.messages import Message, assistant, system, tool_result, user
from forge.llm.protocols import ToolSpec
from forge.llm.stream import (
    Completion,
    MessageDelta,
    ReasoningDelta,
    RetryScheduled,
    StreamEvent,
    StreamFinished,
    ToolCallComplete,
)
from tests.support.anthropic_server import (
    Answer,
    AnthropicServer,
    BadKey,
    Overloaded,
    PromptTooLong,
    RateLimited,
    RequestTooLarge,
    StreamFailure,
    Use,
)

KEY = "sk-ant-test-provider-0123456789"
TOOLS = [
    ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {}}}),
    ToolSpec("list_files", "List files", {"type": "object"}),
]


def provider(server: AnthropicServer, **options: object) -> AnthropicProvider:
    values: dict[str, object] = {"max_retries": 2, "backoff_base": 0.0, "backoff_max": 0.0}
    values.update(options)
    return AnthropicProvider("claude-sonnet-4-5", server.base_url, KEY, **values)  # type: ignore[arg-type]


async def collect(
    client: AnthropicProvider, messages: list[Message], tools: list[ToolSpec] | None = None
) -> tuple[list[StreamEvent], Completion]:
    events = [event async for event in client.stream(messages, tools)]
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return events, last.completion


async def test_text_streams_and_the_request_has_the_api_shape(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(Answer("Hello there, friend."))
    async with provider(anthropic_server) as client:
        events, completion = await collect(client, [system("Be brief."), user("hi")])

    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == "Hello there, friend."
    assert completion.message.content == "Hello there, friend."
    assert completion.finish_reason == "stop"
    (request,) = anthropic_server.requests
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {KEY}"  # how the SDK sends the key
    assert "anthropic-version" in request.headers
    assert request.body["stream"] is True
    assert request.system[0]["text"] == "Be brief."
    assert request.messages == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    assert request.body["max_tokens"] > 0


async def test_usage_counts_cache_reads_and_writes_into_the_prompt(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(Answer("one"), Answer("two"))
    history = [system("You are a careful agent. " * 200), user("first question")]
    async with provider(anthropic_server) as client:
        _, first = await collect(client, history, TOOLS)
        history += [first.message, user("second question")]
        _, second = await collect(client, history, TOOLS)

    reported = anthropic_server.usage_log
    for usage, logged in ((first.usage, reported[0]), (second.usage, reported[1])):
        assert usage is not None
        assert usage.prompt_tokens == (
            logged["input_tokens"]
            + logged["cache_read_input_tokens"]
            + logged["cache_creation_input_tokens"]
        )
        assert usage.cached_tokens == logged["cache_read_input_tokens"]
        assert usage.cache_write_tokens == logged["cache_creation_input_tokens"]
        assert usage.completion_tokens == logged["output_tokens"]
    assert first.usage is not None and second.usage is not None
    assert first.usage.cached_tokens == 0 and first.usage.cache_write_tokens > 0
    # The second request re-reads everything the first one wrote.
    assert second.usage.cached_tokens == first.usage.cache_write_tokens


async def test_a_tool_call_turn_with_parallel_calls_and_its_results(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(
        Answer("Looking.", calls=[Use("read_file", {"path": "a.py"}), Use("list_files")]),
        Answer("Done."),
    )
    history: list[Message] = [system("sys"), user("look")]
    async with provider(anthropic_server) as client:
        events, first = await collect(client, history, TOOLS)
        calls = first.message.tool_calls
        history += [
            first.message,
            tool_result(calls[0], "print(1)"),
            tool_result(calls[1], "no such directory").evolve(meta={"is_error": True}),
        ]
        _, second = await collect(client, history, TOOLS)

    completed = [e for e in events if isinstance(e, ToolCallComplete)]
    assert [(e.index, e.call.name) for e in completed] == [(0, "read_file"), (1, "list_files")]
    assert calls[0].parsed_arguments() == {"path": "a.py"}
    assert first.finish_reason == "tool_calls"
    assert second.message.content == "Done."
    sent = anthropic_server.requests[1]
    assert [t["name"] for t in sent.tools] == ["read_file", "list_files"]
    assert sent.tools[0]["input_schema"] == TOOLS[0].parameters
    reply, results = sent.messages[1], sent.messages[2]
    assert reply["role"] == "assistant"
    assert [b["type"] for b in reply["content"]] == ["text", "tool_use", "tool_use"]
    assert reply["content"][1]["input"] == {"path": "a.py"}
    # Both results in one user message, the failed one marked is_error.
    assert results["role"] == "user"
    first_result, second_result = results["content"]
    assert first_result["tool_use_id"] == calls[0].id and "is_error" not in first_result
    assert second_result["tool_use_id"] == calls[1].id and second_result["is_error"] is True


async def test_thinking_blocks_stream_as_reasoning_and_go_back_with_their_signatures(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(
        Answer(
            "",
            thinking="The user wants a file read.",
            signature="EqQBCkYIBxgCKkD-signature",
            redacted_thinking="encrypted-blob",
            calls=[Use("read_file", {"path": "a"})],
        ),
        Answer("It says 1."),
    )
    history: list[Message] = [system("sys"), user("read a")]
    async with provider(anthropic_server, thinking_budget=2048) as client:
        events, first = await collect(client, history, TOOLS)
        history += [first.message, tool_result(first.message.tool_calls[0], "1")]
        _, second = await collect(client, history, TOOLS)

    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == "The user wants a file read."
    assert first.message.reasoning == reasoning
    kept = first.message.meta[THINKING_META_KEY]
    assert kept == [
        {
            "type": "thinking",
            "thinking": "The user wants a file read.",
            "signature": "EqQBCkYIBxgCKkD-signature",
        },
        {"type": "redacted_thinking", "data": "encrypted-blob"},
    ]
    # Kept through the session file too (meta is recorded).
    assert Message.from_record(first.message.to_record()).meta[THINKING_META_KEY] == kept
    request = anthropic_server.requests[1]
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request.body["max_tokens"] > 2048
    sent = request.messages[1]["content"]
    assert sent[0] == kept[0] and sent[1] == kept[1] and sent[2]["type"] == "tool_use"
    assert second.message.content == "It says 1."


async def test_a_tool_turn_without_kept_thinking_is_sent_without_thinking(
    anthropic_server: AnthropicServer,
) -> None:
    """History from another provider has no thinking blocks: the API would refuse the tool
    turn with thinking on, so that request goes without it."""
    from forge.llm.messages import ToolCall

    call = ToolCall("call_1", "read_file", '{"path": "a"}')
    history = [system("sys"), user("read a"), assistant("", (call,)), tool_result(call, "1")]
    async with provider(anthropic_server, thinking_budget=2048) as client:
        _, completion = await collect(client, history, TOOLS)
    assert completion.message.content == "ok"
    assert "thinking" not in anthropic_server.requests[0].body


async def test_consecutive_same_role_messages_are_merged(
    anthropic_server: AnthropicServer,
) -> None:
    history = [system("sys"), user("one"), user("two"), assistant("a"), assistant("b"), user("c")]
    async with provider(anthropic_server) as client:
        await collect(client, history)
    messages = anthropic_server.requests[0].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in messages[0]["content"]] == ["one", "two"]
    assert [b["text"] for b in messages[1]["content"]] == ["a", "b"]


# --- errors ------------------------------------------------------------------------------------


async def test_a_429_is_retried_after_the_servers_retry_after(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(RateLimited("0"), Answer("after the wait"))
    async with provider(anthropic_server) as client:
        _, completion = await collect(client, [user("hi")])
    assert completion.message.content == "after the wait"
    assert len(anthropic_server.requests) == 2


async def test_a_429_with_retries_used_up_is_a_rate_limit_with_its_hint(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(RateLimited("7"))
    async with provider(anthropic_server, max_retries=0) as client:
        with pytest.raises(RateLimitError) as raised:
            await collect(client, [user("hi")])
    assert raised.value.retry_after == 7.0 and raised.value.status == 429


async def test_529_overloaded_is_retried_with_backoff(anthropic_server: AnthropicServer) -> None:
    anthropic_server.enqueue(Overloaded(), Overloaded(), Answer("finally"))
    async with provider(anthropic_server) as client:
        events, completion = await collect(client, [user("hi")])
    assert completion.message.content == "finally"
    assert len(anthropic_server.requests) == 3
    # Each retry is announced in the stream before the wait, before any of the answer.
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.max_attempts, r.status_code, r.error_kind) for r in retries] == [
        (1, 2, 529, "server_error"),
        (2, 2, 529, "server_error"),
    ]
    assert all(not isinstance(e, MessageDelta) for e in events[: events.index(retries[1])])


async def test_529_overloaded_past_the_retries_is_a_server_error(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(Overloaded())
    async with provider(anthropic_server, max_retries=0) as client:
        with pytest.raises(ServerError, match="Overloaded") as raised:
            await collect(client, [user("hi")])
    assert raised.value.status == 529


@pytest.mark.parametrize("status", [401, 403])
async def test_401_and_403_name_the_fix_and_never_the_key(
    anthropic_server: AnthropicServer, status: int
) -> None:
    anthropic_server.enqueue(BadKey(status))
    async with provider(anthropic_server) as client:
        with pytest.raises(AuthenticationError) as raised:
            await collect(client, [user("hi")])
    message = str(raised.value)
    assert "check the API key" in message and "ANTHROPIC_API_KEY" in message
    assert KEY not in message and raised.value.status == status
    assert len(anthropic_server.requests) == 1  # never retried


async def test_a_missing_key_is_refused_before_any_request(
    anthropic_server: AnthropicServer,
) -> None:
    client = AnthropicProvider("claude-sonnet-4-5", anthropic_server.base_url, "")
    with pytest.raises(AuthenticationError, match="ANTHROPIC_API_KEY"):
        await collect(client, [user("hi")])
    await client.aclose()
    assert anthropic_server.requests == []


async def test_prompt_is_too_long_is_a_context_overflow(anthropic_server: AnthropicServer) -> None:
    anthropic_server.enqueue(PromptTooLong())
    async with provider(anthropic_server) as client:
        with pytest.raises(ContextOverflowError, match="prompt is too long"):
            await collect(client, [user("hi")])
    assert len(anthropic_server.requests) == 1


async def test_request_too_large_is_a_context_overflow(anthropic_server: AnthropicServer) -> None:
    anthropic_server.enqueue(RequestTooLarge())
    async with provider(anthropic_server) as client:
        with pytest.raises(ContextOverflowError) as raised:
            await collect(client, [user("hi")])
    assert raised.value.status == 413


async def test_an_error_event_before_any_output_is_retried(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(StreamFailure(), Answer("second try"))
    async with provider(anthropic_server) as client:
        _, completion = await collect(client, [user("hi")])
    assert completion.message.content == "second try"


async def test_an_error_event_mid_answer_ends_the_stream_with_the_servers_message(
    anthropic_server: AnthropicServer,
) -> None:
    anthropic_server.enqueue(StreamFailure(before="Half an ans"), Answer("never asked"))
    seen: list[str] = []
    async with provider(anthropic_server) as client:
        with pytest.raises(StreamError, match="Overloaded"):
            async for event in client.stream([user("hi")]):
                if isinstance(event, MessageDelta):
                    seen.append(event.text)
    assert "".join(seen) == "Half an ans"
    assert len(anthropic_server.requests) == 1  # output was shown: not retried


async def test_a_clone_shares_the_client_and_speaks_to_another_model(
    anthropic_server: AnthropicServer,
) -> None:
    async with provider(anthropic_server, thinking_budget=2048) as client:
        clone = client.clone_with_model("claude-haiku-4-5", request_timeout=5, max_retries=0)
        _, completion = await collect(clone, [user("summarize")])
        assert clone.model == "claude-haiku-4-5" and clone.thinking_budget == 0
        await clone.aclose()  # a clone never closes the shared client
        _, again = await collect(client, [user("still open")])
    assert completion.message.content == "ok" and again.message.content == "ok"
    assert anthropic_server.requests[0].model == "claude-haiku-4-5"
    assert "thinking" not in anthropic_server.requests[0].body
    assert KEY not in repr(client)


async def test_a_tool_list_change_is_one_cache_write_not_one_per_turn(
    anthropic_server: AnthropicServer,
) -> None:
    """An MCP server starting mid-session adds a tool: the next request writes the prompt from
    the tools on, and the one after reads it all again."""
    history: list[Message] = [system("You are careful. " * 100), user("one")]
    more_tools = [*TOOLS, ToolSpec("mcp_search", "Search the web", {"type": "object"})]
    async with provider(anthropic_server) as client:
        for number, tools in enumerate((TOOLS, TOOLS, more_tools, more_tools, more_tools)):
            _, completion = await collect(client, history, tools)
            history += [completion.message, user(f"turn {number + 2}")]
    usage = anthropic_server.usage_log
    invalidated = [
        number
        for number in range(1, len(usage))
        if usage[number]["cache_read_input_tokens"]
        < usage[number - 1]["cache_read_input_tokens"]
        + usage[number - 1]["cache_creation_input_tokens"]
    ]
    assert invalidated == [2]  # the request that first carried the new tool
    # Tools come first: only the unchanged tools before the new one are still read.
    assert usage[2]["cache_read_input_tokens"] < usage[2]["cache_creation_input_tokens"] / 10
    assert usage[3]["cache_read_input_tokens"] > 0 and usage[4]["cache_read_input_tokens"] > 0


async def test_a_required_tool_is_forced_unless_thinking_is_on(
    anthropic_server: AnthropicServer,
) -> None:
    """`@agent-NAME` forces `task` in the turn's first reply; with extended thinking the API
    refuses forced tool use, so the request goes without it (the message's instruction
    stays)."""
    anthropic_server.enqueue(Answer("forced"), Answer("thinking"), Answer("plain"))
    history: list[Message] = [system("sys"), user("list them")]
    async with provider(anthropic_server) as client:
        [_ async for _ in client.stream(history, TOOLS, required_tool="list_files")]
    async with provider(anthropic_server, thinking_budget=2048) as client:
        [_ async for _ in client.stream(history, TOOLS, required_tool="list_files")]
    async with provider(anthropic_server) as client:
        [_ async for _ in client.stream(history, TOOLS)]
    forced, thinking, plain = (request.body for request in anthropic_server.requests)
    assert forced["tool_choice"] == {"type": "tool", "name": "list_files"}
    assert "tool_choice" not in thinking and thinking["thinking"]["type"] == "enabled"
    assert "tool_choice" not in plain
