"""The last resorts before a request (`Manager._fit_budget`), for a prompt still above its
limit after the fallback ladder: cut every tool output harder, the newest included, then the
middle of old user instructions. Nothing is dropped; what is cut says what was elided.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from forge.context.conversation import Conversation
from forge.context.groups import is_instruction
from forge.context.strategies.ingest_cap import (
    MINIMUM_CAP_TOKENS,
    IngestCapStrategy,
    head_and_tail,
)
from forge.llm.messages import Message
from forge.llm.protocols import TokenCounter

logger = logging.getLogger(__name__)

INSTRUCTION_SHARE = 0.1
"""What an old instruction keeps (head and tail) at the last resort: a share of the budget."""

SPARED_OUTPUTS = 3
"""The newest tool outputs the last resort cuts only when cutting the others is not enough
(issue 23: the newest three stay verbatim unless one alone exceeds its share)."""

CurrentTokens = Callable[[Conversation], int]


def cap_outputs_until(
    conversation: Conversation,
    limit: int,
    cap: IngestCapStrategy,
    *,
    max_tokens: int,
    excluded_tools: Sequence[str],
    current: CurrentTokens,
) -> int:
    """Cut tool outputs with a per-output cap that halves until the prompt fits `limit` or
    the cap reaches its floor; the outputs cut. The newest `SPARED_OUTPUTS` outputs (the ones
    the model is working from) are cut only if that is still not enough."""
    total = 0
    for spared in (SPARED_OUTPUTS, 0):
        per_output = max(MINIMUM_CAP_TOKENS, int(cap.limit(max_tokens)))
        while current(conversation) > limit:
            total += cap.cap_all(
                conversation, per_output, excluded_tools=excluded_tools, spare_newest=spared
            )
            if per_output <= MINIMUM_CAP_TOKENS:
                break
            per_output = max(MINIMUM_CAP_TOKENS, per_output // 2)
    return total


def cut_old_instructions(
    conversation: Conversation,
    limit: int,
    *,
    max_tokens: int,
    counter: TokenCounter,
    current: CurrentTokens,
) -> None:
    """When the user's own messages alone overflow the budget and could not be condensed:
    the oldest (never the latest) keep their head and tail, with what was elided."""
    latest = conversation.latest_user_index()
    per_message = max(MINIMUM_CAP_TOKENS, int(max_tokens * INSTRUCTION_SHARE))
    for index in range(len(conversation)):
        if current(conversation) <= limit:
            return
        message = conversation[index]
        if index == latest or not is_instruction(message):
            continue
        text = head_and_tail(message.content, per_message, counter)
        if text == message.content:
            continue
        meta = {**message.meta, "condensed": True, "strategy": "instructions"}
        shortened = Message(
            role="user", content=text, kind=message.kind, replaces=(message.id,), meta=meta
        )
        conversation.replace_message(index, shortened)
        logger.warning("context: an old instruction was cut to fit the budget")
