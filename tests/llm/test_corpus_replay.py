"""Every recorded response in the shared corpus, replayed byte for byte over loopback HTTP.

Each `.sse` file is served whole and again in 5-byte writes (so lines, JSON and UTF-8 split
across reads), with the content type its `.meta.json` recorded. The provider's result is
compared with what a small, independent reader of the same file says it must be; a few key
files also have their expected values written out literally. `.json` bodies are replayed byte
for byte with the HTTP status their `.meta.json` recorded. A guard test fails if a file in the
corpus is not replayed by one of these.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from forge.llm.errors import (
    BadRequestError,
    LLMError,
    ModelNotFoundError,
    StreamError,
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
    Usage,
)
from tests.conftest import CORPUS
from tests.support.openai_server import OpenAIServer, Replay, recorded_response

SSE_DIR = CORPUS / "sse"
SSE_FILES = sorted(SSE_DIR.rglob("*.sse")) if SSE_DIR.is_dir() else []
JSON_FILES = (
    sorted(p for p in SSE_DIR.rglob("*.json") if not p.name.endswith(".meta.json"))
    if SSE_DIR.is_dir()
    else []
)

pytestmark = pytest.mark.skipif(not SSE_FILES, reason="shared corpus not present")


def corpus_id(path: Path) -> str:
    return str(path.relative_to(SSE_DIR))


# --- an independent reader of a recorded stream ---------------------------------------------


@dataclass
class Expected:
    """What a recorded stream says the assembled reply is."""

    text: str = ""
    reasoning: str = ""
    calls: dict[int, list[str]] = field(default_factory=dict)  # index -> [id, name, arguments]
    usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    model: str = ""
    error_message: str | None = None


def _reasoning_in(delta: dict[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        if isinstance(delta.get(key), str) and delta[key]:
            return str(delta[key])
    content = delta.get("content")
    if isinstance(content, list):
        thinking = [
            inner["text"]
            for part in content
            if part.get("type") == "thinking"
            for inner in part["thinking"]
        ]
        if thinking:
            return "".join(thinking)
    return "".join(d.get("text", "") for d in delta.get("reasoning_details") or [])


def read_recording(path: Path) -> Expected:
    """Walk the file's SSE events by hand (blank-line separated, `data:`/`event:` fields)."""
    expected = Expected()
    text = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        fields = [line for line in block.split("\n") if line and not line.startswith(":")]
        event = next((line[6:].strip() for line in fields if line.startswith("event:")), "")
        data = "\n".join(line[5:].lstrip() for line in fields if line.startswith("data:"))
        if not data or data == "[DONE]":
            continue
        payload = json.loads(data)
        if event == "error" or payload.get("error"):
            expected.error_message = payload["error"]["message"]
            break
        expected.model = payload.get("model") or expected.model
        if payload.get("usage"):
            expected.usage = payload["usage"]
        for choice in payload.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            expected.reasoning += _reasoning_in(delta)
            content = delta.get("content")
            expected.text += content if isinstance(content, str) else ""
            expected.text += delta.get("refusal") or ""
            for call in delta.get("tool_calls") or []:
                slot = expected.calls.setdefault(call["index"], ["", "", ""])
                function = call.get("function") or {}
                slot[0] = slot[0] or call.get("id") or ""
                slot[1] = slot[1] or function.get("name") or ""
                slot[2] += function.get("arguments") or ""
            expected.finish_reason = choice.get("finish_reason") or expected.finish_reason
    return expected


# --- running the provider -------------------------------------------------------------------


@pytest.fixture
async def provider(llm_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleProvider]:
    # No retries: a replayed failure must surface as it is, not be papered over.
    instance = OpenAICompatibleProvider("requested-model", llm_server.base_url, "k", max_retries=0)
    yield instance
    await instance.aclose()


async def replay(
    provider: OpenAICompatibleProvider,
    server: OpenAIServer,
    path: Path,
    split: int | None = None,
    seen: list[StreamEvent] | None = None,
) -> tuple[list[StreamEvent], Completion]:
    server.enqueue(Replay(path, split_every=split))
    events = seen if seen is not None else []
    async for event in provider.stream([user("replay")]):
        events.append(event)
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return events, last.completion


def joined(events: list[StreamEvent], kind: type[MessageDelta] | type[ReasoningDelta]) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


@pytest.mark.parametrize("split", [None, 5])
@pytest.mark.parametrize("path", SSE_FILES, ids=corpus_id)
async def test_every_recorded_stream_assembles_as_recorded(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, path: Path, split: int | None
) -> None:
    expected = read_recording(path)
    if expected.error_message is not None:
        seen: list[StreamEvent] = []
        with pytest.raises(LLMError) as caught:
            await replay(provider, llm_server, path, split, seen)
        assert expected.error_message[:60] in str(caught.value)
        assert joined(seen, ReasoningDelta) == expected.reasoning
        assert not any(isinstance(event, StreamFinished) for event in seen)
        return

    events, completion = await replay(provider, llm_server, path, split)
    message = completion.message
    assert message.content == expected.text
    assert message.reasoning == expected.reasoning
    assert joined(events, MessageDelta) == expected.text
    assert joined(events, ReasoningDelta) == expected.reasoning
    expected_calls = tuple(
        ToolCall(call_id, name, arguments or "{}")
        for call_id, name, arguments in (expected.calls[i] for i in sorted(expected.calls))
    )
    assert message.tool_calls == expected_calls
    completes = [event for event in events if isinstance(event, ToolCallComplete)]
    assert [event.call for event in completes] == list(expected_calls)
    assert completion.finish_reason == expected.finish_reason
    assert completion.model == (expected.model or "requested-model")
    assert expected.usage is not None and completion.usage is not None
    assert completion.usage.prompt_tokens == expected.usage["prompt_tokens"]
    assert completion.usage.completion_tokens == expected.usage["completion_tokens"]
    assert completion.usage.total_tokens == expected.usage["total_tokens"]


# --- literal expectations for key recordings --------------------------------------------------


def sse_file(name: str) -> Path:
    matches = [path for path in SSE_FILES if path.name == name]
    assert matches, f"{name} missing from the corpus"
    return matches[0]


async def test_two_parallel_tool_calls_split_over_many_chunks(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_parse_multiple_pydantic_tools.sse")
    events, completion = await replay(provider, llm_server, path, split=3)
    assert completion.message.tool_calls == (
        ToolCall(
            "call_JMW1whyEaYG438VE1OIflxA2",
            "GetWeatherArgs",
            '{"city": "Edinburgh", "country": "GB", "units": "c"}',
        ),
        ToolCall(
            "call_DNYTawLBoN8fj3KN6qU9N1Ou",
            "get_stock_price",
            '{"ticker": "AAPL", "exchange": "NASDAQ"}',
        ),
    )
    assert [e.index for e in events if isinstance(e, ToolCallComplete)] == [0, 1]
    assert completion.usage == Usage(149, 60, 209)
    assert completion.finish_reason == "tool_calls"
    assert completion.message.content == ""


async def test_temporal_agent_run_over_three_turns(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    turns = [
        await replay(
            provider, llm_server, sse_file(f"test_temporal_test_complex_agent_run.{n}.sse")
        )
        for n in range(3)
    ]
    first, second, third = (completion.message.tool_calls for _, completion in turns)
    assert first == (
        ToolCall("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", "{}"),
        ToolCall("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", "{}"),
    )
    assert second == (
        ToolCall("call_LwxJUB9KppVyogRRLQsamRJv", "get_weather", '{"city":"Mexico City"}'),
    )
    assert third[0].name == "final_result"
    assert third[0].parsed_arguments()["answers"][2] == {
        "label": "Product Name",
        "answer": "The product name is Pydantic AI.",
    }


async def test_deepseek_reasoning_content_streams_as_reasoning(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_deepseek_test_deepseek_model_thinking_stream.0.sse")
    events, completion = await replay(provider, llm_server, path, split=2)
    assert completion.message.content == "Hello there! 😊 How can I help you today?"
    assert completion.message.reasoning.startswith('Hmm, the user just said "Hello".')
    assert len([e for e in events if isinstance(e, ReasoningDelta)]) > 100
    # Reasoning streams first, then the answer.
    first_text = next(i for i, e in enumerate(events) if isinstance(e, MessageDelta))
    assert all(not isinstance(e, ReasoningDelta) for e in events[first_text:])
    assert completion.usage == Usage(6, 212, 218, cached_tokens=0, reasoning_tokens=198)
    assert completion.model == "deepseek-reasoner"


async def test_openrouter_reasoning_field_streams_as_reasoning(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_openrouter_test_openrouter_streaming_reasoning.0.sse")
    events, completion = await replay(provider, llm_server, path)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == [
        "This",
        " is a simple arithmetic question. ",
        "2+2 equals 4.",
    ]
    assert completion.message.content == "2 + 2 = 4"
    assert completion.usage is not None and completion.usage.reasoning_tokens == 13


async def test_interleaved_choices_keep_choice_zero(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_parse_pydantic_model_multiple_choices.sse")
    _, completion = await replay(provider, llm_server, path)
    assert completion.message.content == '{"city":"San Francisco","temperature":65,"units":"f"}'


async def test_groq_error_event_after_reasoning(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_groq_test_tool_use_failed_error_streaming.0.sse")
    seen: list[StreamEvent] = []
    with pytest.raises(StreamError, match="Tool call validation failed") as caught:
        await replay(provider, llm_server, path, seen=seen)
    assert caught.value.status == 400
    assert any(isinstance(event, ReasoningDelta) for event in seen)


async def test_openrouter_error_object_inside_a_chunk(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_openrouter_test_openrouter_stream_error.0.sse")
    seen: list[StreamEvent] = []
    with pytest.raises(StreamError, match="Token limit reached"):
        await replay(provider, llm_server, path, split=7, seen=seen)
    assert joined(seen, ReasoningDelta) == "We need to respond to a greeting. The user"


async def test_snowflake_reasoning_details_and_no_finish_reason(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_snowflake_test_snowflake_thinking_streaming.0.sse")
    _, completion = await replay(provider, llm_server, path, split=4)
    assert completion.message.reasoning == "15 * 27 = 405"
    assert completion.message.content.startswith("15 \u00d7 27 = **405**")
    assert completion.finish_reason is None


async def test_mistral_thinking_parts_are_reasoning(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_mistral_test_mistral_model_thinking_part_iter.0.sse")
    _, completion = await replay(provider, llm_server, path)
    assert completion.message.reasoning.startswith("Okay, the user is asking how to cross")
    assert completion.message.content.startswith("To cross the street safely")


async def test_openrouter_cached_and_reasoning_token_details(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = sse_file("test_openrouter_test_openrouter_stream_with_native_options.0.sse")
    _, completion = await replay(provider, llm_server, path)
    assert completion.usage == Usage(687, 187, 874, cached_tokens=679, reasoning_tokens=118)
    # Its reasoning is encrypted: nothing readable to show.
    assert completion.message.reasoning == ""


# --- recorded whole bodies and HTTP errors ----------------------------------------------------


def read_json(path: Path) -> Any:
    """A recorded JSON body (a small local file, so a blocking read is harmless)."""
    return json.loads(path.read_text())


ERROR_EXPECTATIONS: dict[str, type[LLMError]] = {
    "test_groq_test_tool_use_failed_error.0.json": BadRequestError,
    "test_model_name_suggestions_test_model_name_suggestion_openai-chat.0.json": (
        ModelNotFoundError
    ),
    "test_openai_test_openai_o1_mini_system_role_system.0.json": BadRequestError,
    "test_openai_test_openai_web_search_tool_model_not_supported.0.json": BadRequestError,
}


@pytest.mark.parametrize("path", JSON_FILES, ids=corpus_id)
async def test_every_recorded_body_is_read_or_raised_as_recorded(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer, path: Path
) -> None:
    status, _ = recorded_response(path)
    body = read_json(path)
    if status >= 400:
        expected = ERROR_EXPECTATIONS[path.name]
        llm_server.enqueue(Replay(path), Replay(path))
        with pytest.raises(expected) as streamed:
            _ = [event async for event in provider.stream([user("replay")])]
        with pytest.raises(expected) as whole:
            await provider.complete([user("replay")])
        for error in (streamed.value, whole.value):
            assert type(error) is expected
            assert error.status == status
            assert body["error"]["message"][:50] in str(error)
        return

    llm_server.enqueue(Replay(path))
    completion = await provider.complete([user("replay")])
    message = body["choices"][0]["message"]
    assert completion.message.content == (message.get("content") or "")
    assert completion.message.reasoning == (message.get("reasoning") or "")
    assert [(c.id, c.name, c.arguments) for c in completion.message.tool_calls] == [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in message.get("tool_calls") or []
    ]
    assert completion.finish_reason == body["choices"][0]["finish_reason"]
    assert completion.usage is not None
    assert completion.usage.total_tokens == body["usage"]["total_tokens"]


async def test_groq_whole_reply_with_reasoning_and_a_tool_call(
    provider: OpenAICompatibleProvider, llm_server: OpenAIServer
) -> None:
    path = SSE_DIR / "pydantic-ai" / "test_groq_test_tool_use_failed_error.1.json"
    llm_server.enqueue(Replay(path))
    completion = await provider.complete([user("replay")])
    assert completion.message.tool_calls == (
        ToolCall(
            "fc_311ba17b-89f9-48d3-8fd9-7e74a1264855", "get_something_by_name", '{"name":"test"}'
        ),
    )
    assert completion.message.reasoning.startswith("We need to call with correct param")
    assert completion.usage == Usage(301, 52, 353, cached_tokens=0, reasoning_tokens=22)
    assert completion.model == "openai/gpt-oss-120b"


# --- nothing in the corpus escapes replay -----------------------------------------------------


def test_every_file_in_the_corpus_is_replayed() -> None:
    """Every folder and every response body is covered by the parametrized tests above."""
    folders = {path.name for path in SSE_DIR.iterdir() if path.is_dir()}
    assert folders == {"openai-python", "pydantic-ai"}
    assert {path.relative_to(SSE_DIR).parts[0] for path in SSE_FILES} == folders
    every_file = {path for path in SSE_DIR.rglob("*") if path.is_file()}
    metadata = {path for path in every_file if path.name.endswith(".meta.json")}
    assert every_file - metadata == set(SSE_FILES) | set(JSON_FILES)
    error_bodies = {path.name for path in JSON_FILES if recorded_response(path)[0] >= 400}
    assert error_bodies == set(ERROR_EXPECTATIONS)


def test_every_real_server_capture_is_replayed() -> None:
    """Every capture in `real-servers/` is covered by `test_real_server_replay.py`: streams by
    its parametrized replay (errors and empty streams with their expectations listed), error
    bodies with their expected kind, requests by the tests that send them, and every
    `.headers.txt` beside the body it describes."""
    from tests.llm import test_real_server_replay as real

    root = CORPUS / "real-servers"
    assert {path.name for path in CORPUS.iterdir() if path.is_dir()} == {
        "sse",
        "real-servers",
        "trajectories",
    }
    every_file = {path for path in root.rglob("*") if path.is_file()}
    streams = set(real.REAL_SSE)
    bodies = set(real.REAL_ERROR_BODIES)
    requests = {path for path in every_file if path.name in real.REQUESTS}
    headers = {path for path in every_file if path.name.endswith(".headers.txt")}
    assert every_file == streams | bodies | requests | headers
    assert {path.name for path in requests} == real.REQUESTS
    assert {path.name for path in bodies} == set(real.ERROR_BODIES)
    assert set(real.STREAM_ERRORS) | real.EMPTY_STREAMS <= {path.name for path in streams}
    for header in headers:
        stem = header.name.removesuffix(".headers.txt")
        described = {header.with_name(stem + ".sse"), header.with_name(stem + ".body.json")}
        assert described & (streams | bodies), f"{header.name} describes no replayed body"
