"""Leaving the conversation valid whatever stopped a turn: cancellation, an error, a crash.

Called from the loop's `finally`, so it must not await: it only appends messages (and, as a
last resort, rewrites the list with `repair`). The partial answer is kept, marked
`partial=True`; tool calls without a result get a cancelled result (`meta["cancelled"]`). When
the turn was interrupted (Esc, Ctrl+C, a dialog's Esc, an exit signal) the result says which
calls never ran (`meta["not_run"]`) and which one was cut off while running.
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


NOT_RUN_RESULT = "[cancelled: the turn was interrupted before this call ran]"
"""The result of a call the interrupted turn never started (it waited for approval, or came
after the one that was waiting): nothing of it happened."""

UNANSWERED_QUESTION_RESULT = "[cancelled: the turn was interrupted before the user answered]"
"""The result of an `ask_question` whose dialog was open when the turn was interrupted."""


def cancelled_result(
    call: ToolCall, reason: str = CANCELLED_RESULT, *, not_run: bool = False
) -> Message:
    """The result recorded for a call that never finished (`not_run`: never started)."""
    meta: dict[str, object] = {"cancelled": True}
    if not_run:
        meta["not_run"] = True
    return Message(role="tool", content=reason, tool_call_id=call.id, name=call.name, meta=meta)


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


def answer_interrupted_calls(conversation: Conversation, running_call_id: str | None) -> int:
    """Give every unanswered call of the last assistant message the result of an interrupted
    turn: `CANCELLED_RESULT` for the call that was running (`running_call_id`; it may have
    done part of its work), `UNANSWERED_QUESTION_RESULT` for a question waiting for its
    answer, `NOT_RUN_RESULT` for the others. Returns how many."""
    pending = unanswered_calls(conversation.messages)
    for call in pending:
        if call.id == running_call_id:
            conversation.append(cancelled_result(call))
        elif call.name == "ask_question":
            conversation.append(cancelled_result(call, UNANSWERED_QUESTION_RESULT))
        else:
            conversation.append(cancelled_result(call, NOT_RUN_RESULT, not_run=True))
    return len(pending)


def calls_not_run(messages: Sequence[Message]) -> list[tuple[ToolCall, Message]]:
    """The calls of the latest turn (after its user message) that an interruption answered
    as never run, with their results, in call order: what a client shows as cancelled
    although it saw no event for them."""
    results: dict[str, Message] = {}
    calls: list[ToolCall] = []
    for message in reversed(messages):
        if message.role == "user":
            break
        if message.role == "tool" and message.meta.get("not_run") and message.tool_call_id:
            results[message.tool_call_id] = message
        elif message.role == "assistant":
            calls[:0] = message.tool_calls
    return [(call, results[call.id]) for call in calls if call.id in results]


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
