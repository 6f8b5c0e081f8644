"""Every capture from real server software (`../shared/corpus/real-servers/`), replayed byte
for byte over loopback HTTP with the status line and content type its `.headers.txt` holds.

Streams are replayed whole and in 5-byte writes; the expected result of each is written out
from reading the file. Error bodies must become the error kind listed for them. The guard in
`test_corpus_replay.py` fails if a capture is not covered here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from forge.llm.errors import (
    ContextOverflowError,
    LLMError,
    ModelNotFoundError,
    RateLimitError,
    ServerError,
    StreamError,
)
from forge.llm.messages import Message, ToolCall, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import MessageDelta, StreamEvent, StreamFinished, Usage
from tests.support.openai_server import OpenAIServer, Replay, Text, captured_response
from tests.support.real_servers import (
    CONTENT_NULL_500,
    LITELLM,
    LLAMA_CPP_PYTHON,
    REAL_SERVERS,
    litellm_capture,
    llama_capture,
    llama_cpp_python,
)

pytestmark = pytest.mark.skipif(not REAL_SERVERS.is_dir(), reason="shared corpus not present")

REAL_SSE = sorted(REAL_SERVERS.rglob("*.sse")) if REAL_SERVERS.is_dir() else []
REAL_ERROR_BODIES = sorted(REAL_SERVERS.rglob("*.body.json")) if REAL_SERVERS.is_dir() else []

STREAM_ERRORS: dict[str, tuple[type[LLMError], int | None, str]] = {
    "litellm-1.106.2-midstream-429-after-text.sse": (
        RateLimitError,
        429,
        "scripted rate limit after the stream opened",
    ),
    "litellm-1.106.2-midstream-error-after-text.sse": (
        StreamError,
        500,
        "scripted failure in the middle of the stream",
    ),
}
"""Streams that end in an error: its kind, the status it carries, and the server's words."""

ERROR_BODIES: dict[str, type[LLMError]] = {
    "litellm-1.106.2-http400-context-window.body.json": ContextOverflowError,
    "litellm-1.106.2-http400-unknown-model.body.json": ModelNotFoundError,
    "litellm-1.106.2-http429-ratelimit.body.json": RateLimitError,
    "litellm-1.106.2-http529-mock-streaming-error.body.json": ServerError,
    "llamacpp-python-0.3.36-http400-context-length-nonstream.body.json": ContextOverflowError,
    "llamacpp-python-0.3.36-http500-assistant-content-null.body.json": ServerError,
}

REQUESTS = {
    "llamacpp-python-0.3.36-http500-assistant-content-null.request.json",
    "forge-request-turn1.json",
}
"""Captured requests: replayed as Forge messages in the tests below."""

EMPTY_STREAMS = {"llamacpp-python-0.3.36-overflow-stream-empty-200.sse"}
"""0-byte streams: the provider asks again without streaming (see test_empty_overflow…)."""


def read_json(path: Path) -> Any:
    """A captured JSON file (small and local: a blocking read is harmless)."""
    return json.loads(path.read_bytes())


def capture_id(path: Path) -> str:
    return str(path.relative_to(REAL_SERVERS))


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    instance = OpenAICompatibleProvider("requested-model", llm_server.base_url, "k", max_retries=0)
    yield instance
    await instance.aclose()


def expected_reply(path: Path) -> tuple[str, list[tuple[str, str, str]], dict[str, int] | None]:
    """Text, tool calls (id, name, arguments) and usage, read from the file's data lines."""
    text, usage = "", None
    calls: dict[int, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:], strict=False)
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(call["index"], ["", "", ""])
                slot[0] = slot[0] or call.get("id") or ""
                slot[1] = slot[1] or call["function"].get("name") or ""
                slot[2] += call["function"].get("arguments") or ""
    return text, [tuple(calls[i]) for i in sorted(calls)], usage  # type: ignore[misc]


async def collect(provider: OpenAICompatibleProvider, seen: list[StreamEvent]) -> None:
    async for event in provider.stream([user("replay")]):
        seen.append(event)


@pytest.mark.parametrize("split", [None, 5])
@pytest.mark.parametrize("path", REAL_SSE, ids=capture_id)
async def test_every_captured_stream_replays_as_captured(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, path: Path, split: int | None
) -> None:
    seen: list[StreamEvent] = []
    if path.name in EMPTY_STREAMS:
        # Asked again whole, this server states its real error.
        llm_server.enqueue(Replay(path, split_every=split), Replay(llama_capture(
            "http400-context-length-nonstream.body.json")))  # fmt: skip
        with pytest.raises(ContextOverflowError):
            await collect(provider, seen)
        assert [request.stream for request in llm_server.requests] == [True, False]
        return
    llm_server.enqueue(Replay(path, split_every=split))
    if path.name in STREAM_ERRORS:
        kind, status, words = STREAM_ERRORS[path.name]
        with pytest.raises(LLMError) as caught:
            await collect(provider, seen)
        assert type(caught.value) is kind
        assert caught.value.status == status
        assert words in str(caught.value)
        assert "".join(e.text for e in seen if isinstance(e, MessageDelta)) != ""
        return
    await collect(provider, seen)
    finished = seen[-1]
    assert isinstance(finished, StreamFinished)
    text, calls, usage = expected_reply(path)
    message = finished.completion.message
    assert message.content == text
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == calls
    if usage is None:
        assert finished.completion.usage is None
    else:
        assert finished.completion.usage == Usage(
            usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"]
        )


@pytest.mark.parametrize("path", REAL_ERROR_BODIES, ids=capture_id)
async def test_every_captured_error_body_becomes_its_error_kind(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, path: Path
) -> None:
    status, content_type = captured_response(path)
    assert status >= 400 and content_type == "application/json"
    expected = ERROR_BODIES[path.name]
    llm_server.enqueue(Replay(path), Replay(path))
    with pytest.raises(LLMError) as streamed:
        await collect(provider, [])
    with pytest.raises(LLMError) as whole:
        await provider.complete([user("replay")])
    server_words = read_json(path)["error"]["message"]
    for error in (streamed.value, whole.value):
        assert type(error) is expected
        assert error.status == status
        assert " ".join(server_words.split())[:40] in str(error)


# --- literal expectations ---------------------------------------------------------------------


async def test_llama_cpp_python_forced_tool_call_assembles_from_repeated_deltas(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    """Every delta repeats the id and name (plus a legacy function_call); the random model's
    arguments end inside a string, so they are refused, with a readable reason."""
    llm_server.enqueue(Replay(llama_capture("forced-toolcall-stream.sse"), split_every=7))
    seen: list[StreamEvent] = []
    await collect(provider, seen)
    finished = seen[-1]
    assert isinstance(finished, StreamFinished)
    (call,) = finished.completion.message.tool_calls
    assert call.name == "write_file"
    assert call.id == "call__0_write_file_cmpl-e6e40904-2107-48bc-bee1-b69aa4e8f6c7"
    assert call.arguments.startswith('{ "path": "')
    assert finished.completion.finish_reason == "tool_calls"
    with pytest.raises(ValueError, match=r"not valid JSON: Unterminated string starting at 10$"):
        call.parsed_arguments()


def test_captured_arguments_with_raw_control_characters_parse_leniently() -> None:
    """The arguments llama-cpp-python produced in the captured request hold raw control
    characters inside strings: strict JSON refuses them, Forge accepts them."""
    captured = json.loads(llama_capture("http500-assistant-content-null.request.json").read_text())
    (raw,) = captured["messages"][2]["tool_calls"]
    arguments = raw["function"]["arguments"]
    with pytest.raises(json.JSONDecodeError, match="Invalid control character"):
        json.loads(arguments)
    parsed = ToolCall(raw["id"], "write_file", arguments).parsed_arguments()
    assert set(parsed) == {"path", "content"}
    assert "\t" in parsed["path"] and parsed["content"].startswith("B\x06")


async def test_litellm_text_usage_in_a_chunk_with_an_empty_delta(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Replay(litellm_capture("text-usage.sse")))
    seen: list[StreamEvent] = []
    await collect(provider, seen)
    finished = seen[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.completion.usage == Usage(365, 13, 378)
    assert finished.completion.message.content.endswith("is 42.")


async def test_litellm_streamed_mock_tool_calls_arrive_as_an_empty_reply(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Replay(litellm_capture("mock_tool_calls-streamed-empty.sse")))
    seen: list[StreamEvent] = []
    await collect(provider, seen)
    finished = seen[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.completion.message.content == ""
    assert finished.completion.message.tool_calls == ()


# --- the captured requests --------------------------------------------------------------------


def forge_messages(request: dict[str, object]) -> list[Message]:
    """A captured request's messages as Forge messages."""
    messages = []
    for raw in request["messages"]:  # type: ignore[attr-defined]
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in raw.get("tool_calls") or ()
        )
        messages.append(
            Message(
                role=raw["role"],
                content=raw.get("content") or "",
                tool_calls=calls,
                tool_call_id=raw.get("tool_call_id"),
            )
        )
    return messages


async def test_the_request_llama_cpp_python_refused_is_accepted_as_forge_now_sends_it(
    llm_server: OpenAIServer,
) -> None:
    """The captured request (content null beside tool calls) gets the captured HTTP 500 from
    the loopback llama-cpp-python; the same conversation as Forge sends it now gets 200."""
    llama_cpp_python(llm_server)
    captured = json.loads(llama_capture("http500-assistant-content-null.request.json").read_text())
    async with httpx.AsyncClient() as client:
        refused = await client.post(f"{llm_server.base_url}/chat/completions", json=captured)
    assert refused.status_code == 500
    assert refused.content == CONTENT_NULL_500.read_bytes()

    llm_server.enqueue(Text("Done."))
    async with OpenAICompatibleProvider(
        "tiny-fc", llm_server.base_url, "", max_retries=0
    ) as provider:
        completion = await provider.complete(forge_messages(captured))
    assert completion.message.content == "Done."
    sent = llm_server.requests[-1].messages
    assert sent[2]["role"] == "assistant" and sent[2]["content"] == ""
    assert sent[2]["tool_calls"][0]["function"]["name"] == "write_file"


async def test_forges_first_request_as_captured_carries_tool_choice_now(
    llm_server: OpenAIServer,
) -> None:
    """The captured first request Forge sent (tools, no tool_choice) now gets tool_choice."""
    captured = read_json(LLAMA_CPP_PYTHON / "forge-request-turn1.json")
    assert "tool_choice" not in captured
    from forge.llm.protocols import ToolSpec

    tools = [
        ToolSpec(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in captured["tools"]
    ]
    async with OpenAICompatibleProvider(
        captured["model"], llm_server.base_url, "", max_retries=0
    ) as provider:
        await provider.complete(forge_messages(captured), tools)
    sent = llm_server.requests[-1].body
    assert sent["tool_choice"] == "auto"
    assert sent["tools"] == captured["tools"]
    assert sent["messages"] == captured["messages"]


def test_litellm_and_llama_folders_hold_only_known_captures() -> None:
    assert {path.name for path in REAL_SERVERS.iterdir()} == {"litellm", "llama-cpp-python"}
    assert LITELLM.is_dir() and LLAMA_CPP_PYTHON.is_dir()
