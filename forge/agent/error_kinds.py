"""Stable names for what went wrong, used as the `kind` of an `ErrorEvent`.

Clients switch on these strings (and `forge run --output jsonl` prints them), so they never
change once published; see docs/adr/0015-headless-output.md.
"""

from __future__ import annotations

from forge.llm.errors import LLMError


class EmptyReplyError(LLMError):
    """The model's reply had neither text nor tool calls (nothing to append)."""


_ERROR_KINDS = {
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


TIMEOUT_KIND = "timeout"
"""The kind `forge run` reports when `--timeout` ends the run."""

ERROR_KINDS = frozenset({*_ERROR_KINDS.values(), "llm_error", "internal", TIMEOUT_KIND})
"""Every kind an ErrorEvent (or a headless error record) can carry; all are documented."""


def error_kind(error: BaseException | None) -> str:
    """A stable, snake_case name for an error (the `kind` of an ErrorEvent)."""
    if error is None:
        return "internal"
    for cls in type(error).__mro__:
        if cls.__name__ in _ERROR_KINDS:
            return _ERROR_KINDS[cls.__name__]
    if isinstance(error, LLMError):
        return "llm_error"
    return "internal"
