"""Token counts a server reports are data from outside: checked before anything adds or prices
them (docs/adr/0036).

A count is trusted when it is an integer (not a bool) in 0…`MAX_TOKENS_PER_REQUEST`; cached
tokens are part of the prompt (as OpenAI-compatible servers define `prompt_tokens`), so more
cached than prompt tokens is not trusted either. An untrusted count is ignored with a log line
(never an exception): a 400-digit `prompt_tokens` once overflowed the price arithmetic and
killed the run, and cached above prompt once priced a request at -$1,249.99.
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("forge.llm.usage")

MAX_TOKENS_PER_REQUEST = 10**9
"""No real request or reply comes near a billion tokens; a larger count is a broken or
hostile server."""


def is_token_count(value: Any, limit: int = MAX_TOKENS_PER_REQUEST) -> bool:
    """Whether `value` is an integer token count in 0…`limit`."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit


def checked_count(value: Any, field: str) -> int | None:
    """`value` when it is a trustworthy count; None when absent; else None with a log line
    naming `field` (the value's length only: it can be a megabyte of digits)."""
    if value is None:
        return None
    if is_token_count(value):
        return int(value)
    logger.warning("Ignored the server's usage %s: %s", field, describe(value))
    return None


def checked_cached(cached: int, prompt: int) -> int:
    """`cached` when it is at most `prompt`; else 0 with a log line (cached tokens are part
    of the prompt, so more of them is a server's error, and would price a request below $0)."""
    if cached <= prompt:
        return cached
    logger.warning(
        "Ignored the server's usage cached_tokens: %d cached of %d prompt tokens", cached, prompt
    )
    return 0


def describe(value: Any) -> str:
    """A short description of an untrusted value for a log line."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            return "a negative number"
        return f"a {len(str(value)) if value < 10**100 else 'huge'}-digit number"
    return f"not an integer ({type(value).__name__})"
