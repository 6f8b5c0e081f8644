"""Loopback servers that behave like the real server software captured in the shared corpus
(`../shared/corpus/real-servers/`), built from the captured bytes themselves.

`llama_cpp_python(server)` makes the loopback server answer as llama-cpp-python 0.3.36 did:
HTTP 500 (the captured body) for an assistant message with tool calls whose content is not a
string; for a prompt over its 2,048-token window, the captured empty 200 stream when streamed
and the captured 400 `context_length_exceeded` when not; no usage at all; tool calls only when
`tool_choice` is sent. `litserve_like(server)` reports all-zero usage, as LitServe 0.2.19 did.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CORPUS
from tests.support.openai_server import (
    ContextOverflow,
    Guard,
    OpenAIServer,
    RecordedRequest,
    Replay,
    Reply,
)

REAL_SERVERS = CORPUS / "real-servers"
LLAMA_CPP_PYTHON = REAL_SERVERS / "llama-cpp-python"
LITELLM = REAL_SERVERS / "litellm"

LLAMA_WINDOW = 2048
"""The window of the captured llama-cpp-python server (its overflow error states it)."""


def llama_capture(name: str) -> Path:
    """A llama-cpp-python 0.3.36 capture by the part of its name after the version."""
    return LLAMA_CPP_PYTHON / f"llamacpp-python-0.3.36-{name}"


def litellm_capture(name: str) -> Path:
    """A LiteLLM 1.106.2 capture by the part of its name after the version."""
    return LITELLM / f"litellm-1.106.2-{name}"


CONTENT_NULL_500 = llama_capture("http500-assistant-content-null.body.json")
OVERFLOW_EMPTY_STREAM = llama_capture("overflow-stream-empty-200.sse")
OVERFLOW_400 = llama_capture("http400-context-length-nonstream.body.json")


def prompt_tokens_estimate(request: RecordedRequest) -> int:
    """A rough size of the prompt's messages, as the loopback server counts it (characters
    of their JSON / 4)."""
    return len(json.dumps(request.messages)) // 4


def rejects_content_null(request: RecordedRequest) -> bool:
    """Whether llama-cpp-python's request model rejects this request: an assistant message
    with tool calls and `content` null or missing."""
    return any(
        message.get("role") == "assistant"
        and message.get("tool_calls")
        and not isinstance(message.get("content"), str)
        for message in request.messages
    )


def llama_cpp_python_guard(window: int = LLAMA_WINDOW) -> Guard:
    """The request rules of the captured llama-cpp-python server, as an `OpenAIServer.guard`.

    A window other than the captured 2,048 tokens states itself in the same words, scripted
    (`ContextOverflow` words it as llama-cpp-python and OpenAI do)."""

    def guard(request: RecordedRequest) -> Reply | None:
        if rejects_content_null(request):
            return Replay(CONTENT_NULL_500)
        size = prompt_tokens_estimate(request)
        if size > window:
            if request.stream:
                return Replay(OVERFLOW_EMPTY_STREAM)
            return Replay(OVERFLOW_400) if window == LLAMA_WINDOW else ContextOverflow(window, size)
        return None

    return guard


def llama_cpp_python(server: OpenAIServer, window: int = LLAMA_WINDOW) -> OpenAIServer:
    """Make `server` behave like the captured llama-cpp-python 0.3.36 server."""
    server.guard = llama_cpp_python_guard(window)
    server.usage_mode = "none"
    server.tool_calls_need_tool_choice = True
    return server


def litserve_like(server: OpenAIServer) -> OpenAIServer:
    """Make `server` report all-zero usage, as LitServe 0.2.19 did."""
    server.usage_mode = "zero"
    return server


UNTERMINATED_ERROR_STREAM = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,'
    b'"delta":{"role":"assistant"},"finish_reason":null}]}\n\n'
    b'data: {"error": {"message": "CUDA out of memory while decoding", '
    b'"type": "server_error", "code": 500}}'
)
"""A LitServe-style error stream: the error event is the last bytes, no closing blank line
(scripted from the behaviour issue 12 describes; no capture exists)."""
