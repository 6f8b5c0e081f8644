"""Typed LLM errors. Messages never contain the API key (callers pass already-safe text)."""

from __future__ import annotations


class LLMError(Exception):
    """Base class of every provider error."""

    retryable: bool = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message


class AuthenticationError(LLMError):
    """401/403: the key is missing, wrong or lacks access."""


class ModelNotFoundError(LLMError):
    """404: the server does not serve that model (or the base URL is wrong)."""


class BadRequestError(LLMError):
    """400 that is not a context overflow: the request itself is wrong."""


class ContextOverflowError(LLMError):
    """The prompt is longer than the model's context window. `context_window` is the window
    the server stated in its error ("maximum context length is 2048 tokens"), when it did."""

    def __init__(
        self, message: str, *, status: int | None = None, context_window: int | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.context_window = context_window


class RateLimitError(LLMError):
    """429: slow down; `retry_after` is the server's hint in seconds, if it gave one."""

    retryable = True

    def __init__(
        self, message: str, *, status: int | None = 429, retry_after: float | None = None
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class QuotaExhaustedError(LLMError):
    """429 insufficient_quota: out of credit. Never retried."""


class ServerError(LLMError):
    """5xx from the server."""

    retryable = True


class TransportError(LLMError):
    """Connection refused, timeouts, resets, a stream cut off mid-way."""

    retryable = True


class MalformedStreamError(LLMError):
    """The server sent something that is not a valid Chat Completions stream or body."""


class StreamError(LLMError):
    """The server reported an error inside an otherwise valid stream."""

    retryable = True


ERROR_KIND_NAMES = {
    "AuthenticationError": "authentication",
    "ModelNotFoundError": "model_not_found",
    "BadRequestError": "bad_request",
    "ContextOverflowError": "context_overflow",
    "RateLimitError": "rate_limited",
    "QuotaExhaustedError": "quota_exhausted",
    "ServerError": "server_error",
    "TransportError": "transport",
    "MalformedStreamError": "malformed_stream",
    "StreamError": "stream_error",
    "EmptyReplyError": "empty_reply",
}
"""Error class name → the stable snake_case kind clients switch on (an `ErrorEvent.kind`, a
`RetryScheduled.error_kind`; docs/adr/0015). Published names never change."""


def kind_of(error: BaseException) -> str | None:
    """The stable kind of `error` (by its class or a base class), or None if it has none."""
    for cls in type(error).__mro__:
        if cls.__name__ in ERROR_KIND_NAMES:
            return ERROR_KIND_NAMES[cls.__name__]
    return None
