"""What resuming a session costs when the provider's prompt cache has expired (docs/adr/0037).

Anthropic keeps a cached prompt for its TTL (`llm.cache_ttl`: 5 minutes or 1 hour) after the
last request that used it. A session resumed later pays to write its whole prompt to the cache
again on the first request; Forge says so, with the price, before that request is sent:
"resuming re-caches 84.2k prompt tokens ≈ $0.32 (the prompt cache expired 3 h ago)".
"""

from __future__ import annotations

import time

from forge.agent.costs import format_dollars
from forge.config.prices import PER_MILLION, PriceTable
from forge.context.conversation import Conversation

TTL_SECONDS = {"5m": 5 * 60, "1h": 60 * 60}
"""Seconds a cache entry lives, by `llm.cache_ttl`."""


def last_request_time(conversation: Conversation) -> float | None:
    """When the session last heard from the model: the newest assistant message's time."""
    for message in reversed(conversation.messages):
        if message.role == "assistant":
            return message.created_at
    return None


def _ago(seconds: float) -> str:
    if seconds < 2 * 3600:
        return f"{max(1, round(seconds / 60))} min ago"
    if seconds < 2 * 86400:
        return f"{round(seconds / 3600)} h ago"
    return f"{round(seconds / 86400)} days ago"


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def recache_notice(
    conversation: Conversation,
    prompt_tokens: int,
    *,
    model: str,
    ttl: str,
    prices: PriceTable,
    now: float | None = None,
) -> str | None:
    """The notice for a resumed session whose cache expired, or None while it is still warm
    (or when the session never reached the model). `prompt_tokens` is the prompt the first
    request will send (tools included)."""
    last = last_request_time(conversation)
    if last is None or prompt_tokens <= 0:
        return None
    idle = (time.time() if now is None else now) - last
    if idle <= TTL_SECONDS.get(ttl, TTL_SECONDS["5m"]):
        return None
    price = prices.lookup(model)
    cost = (
        format_dollars(prompt_tokens * price.cache_write_price / PER_MILLION)
        if price is not None
        else f"an unknown amount ({model} has no price)"
    )
    return (
        f"Resuming re-caches {_tokens(prompt_tokens)} prompt tokens ≈ {cost} "
        f"(the prompt cache expired: last request {_ago(idle)})."
    )
