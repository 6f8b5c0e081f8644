"""Turn what an OpenAI-compatible server said went wrong into Forge's typed errors.

Two sources feed this module: an HTTP error response (status, headers, body) and an error
object that arrives inside an otherwise successful stream (`event: error`, or a chunk with an
`"error"` key). Both end up as an `LLMError` subclass with a short, readable message that
quotes the server's own message. Messages are built only from the server's reply, never from
the request, so the API key cannot leak into them.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any

from forge.llm.errors import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    LLMError,
    ModelNotFoundError,
    QuotaExhaustedError,
    RateLimitError,
    ServerError,
    StreamError,
)

_MAX_MESSAGE_CHARS = 300
"""Server messages longer than this are cut: an error line should fit on a screen."""

_CONTEXT_OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "context_window_exceeded", "exceed_context_size_error"}
)
_CONTEXT_OVERFLOW_PHRASES = (
    "maximum context length",
    "context window",
    "context_length_exceeded",
    "too many tokens",
    "prompt is too long",
    # Anthropic, when prompt + max_tokens do not fit: "input length and `max_tokens` exceed
    # context limit: 198000 + 16384 > 200000".
    "exceed context limit",
    "input is too long",
    "reduce the length of the messages",
)
_QUOTA_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_RATE_LIMIT_CODES = frozenset(
    # LiteLLM's proxy types its 429s "throttling_error", in HTTP bodies and inside streams.
    # Anthropic types its 429s "rate_limit_error".
    {
        "rate_limit_exceeded",
        "rate_limit",
        "too_many_requests",
        "throttling_error",
        "rate_limit_error",
    }
)
_MODEL_NOT_FOUND_CODES = frozenset({"model_not_found"})
_MODEL_NOT_FOUND_PHRASES = (
    # LiteLLM answers an unknown model with HTTP 400 "Invalid model name passed in model=…".
    "invalid model name",
)
_STATED_WINDOW_PATTERNS = (
    # OpenAI, vLLM, llama-cpp-python, OpenRouter: "maximum context length is 2048 tokens".
    re.compile(r"maximum context length is (\d[\d,]*) tokens", re.IGNORECASE),
    # llama.cpp's llama-server: "exceeds the available context size (2048 tokens)".
    re.compile(r"context size \((\d[\d,]*) tokens\)", re.IGNORECASE),
    re.compile(r"context window (?:of|is) (\d[\d,]*) tokens", re.IGNORECASE),
)


def error_object(body: Any) -> dict[str, Any]:
    """The `error` object of a body (or the body itself when it is a bare error dict)."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            return inner
        if isinstance(inner, str):
            return {"message": inner}
        return body
    return {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def server_message(body: Any, fallback: str) -> str:
    """The server's human message from an error body, shortened; `fallback` when it has none."""
    error = error_object(body)
    message = _text(error.get("message")) or _text(error.get("detail"))
    if not message and isinstance(body, str):
        message = body.strip()
    message = " ".join(message.split()) or fallback
    if len(message) > _MAX_MESSAGE_CHARS:
        message = message[: _MAX_MESSAGE_CHARS - 1] + "…"
    return message


def _codes(error: Mapping[str, Any]) -> set[str]:
    """The error's machine-readable code and type, lowercased (either may be absent or int)."""
    found = set()
    for key in ("code", "type", "status"):
        value = error.get(key)
        if isinstance(value, str) and value:
            found.add(value.lower())
    return found


def is_context_overflow(error: Mapping[str, Any], message: str) -> bool:
    """Whether an error object or message says the prompt exceeded the context window."""
    if _codes(error) & _CONTEXT_OVERFLOW_CODES:
        return True
    lowered = message.lower()
    return any(phrase in lowered for phrase in _CONTEXT_OVERFLOW_PHRASES)


def stated_context_window(error: Mapping[str, Any], message: str) -> int | None:
    """The context window an overflow error states, in tokens: llama-server's `n_ctx` field,
    or a number in the message ("maximum context length is 2048 tokens"). None if it states
    none."""
    n_ctx = error.get("n_ctx")
    if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
        return n_ctx
    for pattern in _STATED_WINDOW_PATTERNS:
        found = pattern.search(message)
        if found:
            return int(found.group(1).replace(",", "")) or None
    return None


def _overflow(
    described: str, error: Mapping[str, Any], message: str, status: int | None
) -> LLMError:
    return ContextOverflowError(
        f"Context window exceeded ({described})",
        status=status,
        context_window=stated_context_window(error, message),
    )


def _status_of(error: Mapping[str, Any]) -> int | None:
    """The HTTP-like status an in-stream error carries: `status_code` or `code`, a number or
    a string of digits (LiteLLM sends `"code": "429"`)."""
    for key in ("status_code", "code"):
        value = error.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, or `Retry-After` in seconds or
    as an HTTP date. None when absent or unreadable; never negative."""
    lowered = {key.lower(): value for key, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, moment.timestamp() - current)


def decode_body(raw: bytes) -> Any:
    """The body as JSON when it is JSON, else as text."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def error_from_response(status: int, headers: Mapping[str, str], body: Any) -> LLMError:
    """The typed error for an HTTP error response."""
    error = error_object(body)
    codes = _codes(error)
    message = server_message(body, fallback=f"HTTP {status}")
    described = f"HTTP {status}: {message}"
    if status in (401, 403):
        return AuthenticationError(f"Authentication failed ({described})", status=status)
    if status == 404 or (
        status == 400
        and (
            codes & _MODEL_NOT_FOUND_CODES
            or any(phrase in message.lower() for phrase in _MODEL_NOT_FOUND_PHRASES)
        )
    ):
        return ModelNotFoundError(f"Model or endpoint not found ({described})", status=status)
    if status == 429:
        if codes & _QUOTA_CODES:
            return QuotaExhaustedError(f"Quota exhausted ({described})", status=status)
        return RateLimitError(
            f"Rate limited ({described})", status=status, retry_after=parse_retry_after(headers)
        )
    if status == 413 or (400 <= status < 500 and is_context_overflow(error, message)):
        return _overflow(described, error, message, status)
    if status >= 500:
        return ServerError(f"Server error ({described})", status=status)
    return BadRequestError(f"Request rejected ({described})", status=status)


def error_from_stream_payload(payload: Any) -> LLMError:
    """The typed error for an error object the server sent inside a stream."""
    error = error_object(payload)
    codes = _codes(error)
    message = server_message(payload, fallback="the server reported an error mid-stream")
    status = _status_of(error)
    if is_context_overflow(error, message):
        return _overflow(message, error, message, status)
    if codes & _QUOTA_CODES:
        return QuotaExhaustedError(f"Quota exhausted ({message})", status=status)
    if status == 429 or codes & _RATE_LIMIT_CODES:
        return RateLimitError(f"Rate limited ({message})", status=status)
    return StreamError(f"The server reported an error mid-stream: {message}", status=status)
