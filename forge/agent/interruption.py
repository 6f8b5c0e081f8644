"""Leaving the conversation valid whatever stopped a turn: cancellation, an error, a crash.

Called from the loop's `finally`, so it must not await: it only appends messages (and, as a
last resort, rewrites the list with `repair`). The partial answer is kept, marked
`partial=True`; tool calls without a result get the standard cancelled result.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from forge.context.conversation import CANCELLED_RESULT, Conversation, repair
from forge.llm.messages import Message, ToolCall

logger = logging.getLogger(__name__)


def keep_partial_answer(conversation: Conversation, text: str, reasoning: str = "") -> bool:
    """Append the streamed-so-far answer as a partial assistant message (if there is text)."""
    if not text:
        return False
    conversation.append(
        Message(role="assistant", content=text, reasoning=reasoning, meta={"partial": True})
    )
    return True


def cancelled_result(call: ToolCall, reason: str = CANCELLED_RESULT) -> Message:
    """The result recorded for a call that never finished."""
    return Message(
        role="tool",
        content=reason,
        tool_call_id=call.id,
        name=call.name,
        meta={"cancelled": True},
    )


def unanswered_calls(messages: Sequence[Message]) -> list[ToolCall]:
    """The calls of the last assistant message that have no result yet, in order.

    Results are appended in call order, so the unanswered calls are a tail of the call list.
    Returns [] when the list does not end in such a group.
    """
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "tool":
            continue
        if message.role != "assistant" or not message.tool_calls:
            return []
        answered = {m.tool_call_id for m in messages[position + 1 :] if m.role == "tool"}
        return [call for call in message.tool_calls if call.id not in answered]
    return []


def answer_pending_calls(conversation: Conversation, reason: str = CANCELLED_RESULT) -> int:
    """Give every unanswered call of the last assistant message a result; returns how many."""
    pending = unanswered_calls(conversation.messages)
    for call in pending:
        conversation.append(cancelled_result(call, reason))
    return len(pending)


def ensure_valid(conversation: Conversation) -> bool:
    """Make the conversation provider-valid; True if anything had to change.

    Answers pending calls first (cheap, append-only, what a cancelled turn leaves); only a
    list broken some other way is rewritten whole with `repair`.
    """
    changed = answer_pending_calls(conversation) > 0
    if conversation.is_valid():
        return changed
    logger.warning("repairing an invalid conversation: %s", "; ".join(conversation.problems()))
    conversation.replace_range(0, len(conversation), repair(conversation.messages))
    return True
