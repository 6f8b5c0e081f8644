"""LiteLLM's proxy serving the Anthropic Messages API (`/v1/messages`), captured from the real
server (`tests/fixtures/real-servers/litellm-anthropic/`, README there) and replayed byte for
byte over loopback HTTP to Forge's Anthropic provider (docs/adr/0037).

Every capture is covered: streams whole and in 7-byte writes, error bodies with their status.
The requests in the capture are the ones Forge builds today (checked for the tool-result turn).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.llm.anthropic_provider import AnthropicProvider
from forge.llm.errors import BadRequestError, ContextOverflowError, LLMError, RateLimitError
from forge.llm.messages import Message, ToolCall, assistant, system, tool_result, user
from forge.llm.protocols import ToolSpec
from forge.llm.stream import Completion, MessageDelta, StreamFinished
from tests.support.anthropic_server import AnthropicServer
from tests.support.openai_server import Raw, captured_response

CAPTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real-servers" / "litellm-anthropic"
VERSION = "1.106.2"
MODEL = "claude-via-litellm"

STREAMS: dict[str, tuple[str, list[tuple[str, dict[str, object]]], str, tuple[int, int]]] = {
    # name: (text, [(tool, arguments)], finish reason, (prompt tokens, output tokens))
    "text-usage": ("a.py prints hello.", [], "stop", (120, 6)),
    "toolcall": ("Reading it.", [("read_file", {"path": "a.py"})], "tool_calls", (42, 6)),
    "two-parallel-toolcalls": (
        "",
        [("read_file", {"path": "a.py"}), ("list_files", {})],
        "tool_calls",
        (42, 4),
    ),
    "tool-result-followup": ("It prints hello.", [], "stop", (109, 4)),
}
ERRORS: dict[str, tuple[type[LLMError], int]] = {
    "http429-ratelimit": (RateLimitError, 429),
    "context-window": (ContextOverflowError, 400),
    # Without a database LiteLLM answers a wrong key with 400 "No connected db.".
    "http401-bad-key": (BadRequestError, 400),
}


def capture(name: str, suffix: str) -> Path:
    return CAPTURES / f"litellm-{VERSION}-{name}{suffix}"


def replay(path: Path, split_every: int | None = None) -> Raw:
    status, content_type = captured_response(path)
    return Raw(
        path.read_bytes(),
        status=status,
        content_type=content_type or "application/json",
        split_every=split_every,
    )


async def completion_of(server: AnthropicServer) -> Completion:
    async with AnthropicProvider(MODEL, server.base_url, "sk-replay", max_retries=0) as client:
        events = [event async for event in client.stream([user("What is in a.py?")])]
    last = events[-1]
    assert isinstance(last, StreamFinished)
    streamed = "".join(e.text for e in events if isinstance(e, MessageDelta))
    assert streamed == last.completion.message.content
    return last.completion


def test_every_capture_is_covered() -> None:
    found = {
        path.name.removeprefix(f"litellm-{VERSION}-").split(".", 1)[0]
        for path in CAPTURES.glob("litellm-*")
    }
    assert found == set(STREAMS) | set(ERRORS)


@pytest.mark.parametrize("split_every", [None, 7])
@pytest.mark.parametrize("name", sorted(STREAMS))
async def test_a_captured_stream_assembles(
    anthropic_server: AnthropicServer, name: str, split_every: int | None
) -> None:
    text, calls, finish, (prompt, output) = STREAMS[name]
    anthropic_server.enqueue(replay(capture(name, ".sse"), split_every))
    completion = await completion_of(anthropic_server)
    assert completion.message.content == text
    assert [(c.name, c.parsed_arguments()) for c in completion.message.tool_calls] == calls
    assert completion.finish_reason == finish
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (prompt, output)
    # LiteLLM reports no cache use for a backend without one.
    assert completion.usage.cached_tokens == completion.usage.cache_write_tokens == 0


@pytest.mark.parametrize("name", sorted(ERRORS))
async def test_a_captured_error_body_is_its_kind(
    anthropic_server: AnthropicServer, name: str
) -> None:
    kind, status = ERRORS[name]
    anthropic_server.enqueue(replay(capture(name, ".body.json")))
    with pytest.raises(kind) as raised:
        await completion_of(anthropic_server)
    assert raised.value.status == status
    if isinstance(raised.value, ContextOverflowError):
        assert raised.value.context_window == 8192
    if isinstance(raised.value, RateLimitError):
        assert raised.value.retry_after is None  # LiteLLM does not pass the backend's hint on


def test_the_captured_requests_are_what_forge_sends() -> None:
    call = ToolCall("toolu_capture_1", "read_file", '{"path": "a.py"}')
    tools = [
        ToolSpec(
            "read_file",
            "Read a file",
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        ),
        ToolSpec("list_files", "List files", {"type": "object", "properties": {}}),
    ]
    messages: list[Message] = [
        system("You are a careful coding agent."),
        user("What is in a.py?"),
        assistant("Reading it.", (call,)),
        tool_result(call, "print('hello')\n"),
    ]
    provider = AnthropicProvider(MODEL, "http://127.0.0.1:9", "sk-replay")
    built = {**provider.request_body(messages, tools), "stream": True}
    recorded = json.loads(capture("tool-result-followup", ".request.json").read_text())
    assert built == recorded
    # LiteLLM turned it into a valid Chat Completions conversation for its backend.
    backend = json.loads(capture("tool-result-followup", ".backend-requests.json").read_text())
    roles = [m["role"] for m in backend[0]["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert backend[0]["messages"][3]["tool_call_id"] == "toolu_capture_1"
