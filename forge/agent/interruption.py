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


INTERRUPTED_NOTE = "[interrupted by the user]"
"""Ends a partial answer the user cut off, so the model knows it was not its whole reply."""


def keep_partial_answer(
    conversation: Conversation, text: str, reasoning: str = "", *, interrupted: bool = False
) -> bool:
    """Append the streamed-so-far answer as a partial assistant message (if there is text);
    `interrupted` (the user stopped the turn) ends it with `INTERRUPTED_NOTE`."""
    if not text:
        return False
    content = f"{text}\n\n{INTERRUPTED_NOTE}" if interrupted else text
    conversation.append(
        Message(role="assistant", content=content, reasoning=reasoning, meta={"partial": True})
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


CUT_OFF_NOTE = (
    "[Forge note: the previous turn was cut off — Forge stopped while it ran (a crash or a "
    "kill). Tool calls without a result did not complete; check before relying on them.]"
)
"""Told to the model when a resumed session's last turn never finished."""


def note_cut_off_turn(conversation: Conversation) -> bool:
    """If the conversation ends in tool calls that never got a result (Forge was killed
    mid-turn), give them the cancelled result and tell the model with `CUT_OFF_NOTE` (a user
    message marked `meta["note"] = "cut_off"`). Returns whether it did."""
    if not unanswered_calls(conversation.messages):
        return False
    answer_pending_calls(conversation)
    conversation.append(Message(role="user", content=CUT_OFF_NOTE, meta={"note": "cut_off"}))
    return True
