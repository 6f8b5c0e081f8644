"""Pinning the plan: the prompt holds the current plan exactly once, right after the latest
user message, and never an `update_plan` call.

`fold_plan` is the pure rule: every successful `update_plan` call (and every failed one older
than the latest success) leaves the list with its result; an assistant message left with no
text and no calls goes too; any older plan message goes; one plan message for the newest plan
goes right after the latest user message. The prefix before that message is untouched, so a
provider's prompt cache keeps hitting on it. `PlanPin.pin` applies the rule to a conversation
before each LLM call, as one contiguous replacement (the session log records it), and only
looks again when something that can matter was appended. See docs/adr/0028-pinned-plan.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from forge.context.conversation import Conversation, tool_group_end
from forge.context.groups import latest_user_index
from forge.context.plan import (
    PLAN_TOOL,
    Plan,
    plan_message,
    plan_of_arguments,
    plan_of_message,
)
from forge.context.strategies.deterministic import AppendCursor
from forge.llm.messages import Message, MessageKind, ToolCall, new_message_id


def _succeeded(result: Message) -> bool:
    return not (
        result.meta.get("is_error") or result.meta.get("cancelled") or result.meta.get("rejected")
    )


def plan_of_call(call: ToolCall, result: Message | None) -> Plan | None:
    """The plan a finished `update_plan` call set, or None (another tool, no result yet, an
    error, a cancelled call, or arguments that are not a valid plan)."""
    if call.name != PLAN_TOOL or result is None or not _succeeded(result):
        return None
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return None
    return plan_of_arguments(arguments)


def _results(messages: Sequence[Message], start: int) -> dict[str, Message]:
    end = tool_group_end(messages, start)
    return {m.tool_call_id or "": m for m in messages[start + 1 : end] if m.role == "tool"}


def current_plan(messages: Sequence[Message]) -> Plan | None:
    """The newest plan in `messages`: from the last successful `update_plan` call or plan
    message, whichever comes later; None if there never was one. An empty plan is cleared."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.kind is MessageKind.PLAN:
            return plan_of_message(message)
        if message.role == "assistant" and message.tool_calls:
            results = _results(messages, position)
            for call in reversed(message.tool_calls):
                plan = plan_of_call(call, results.get(call.id))
                if plan is not None:
                    return plan
    return None


def _last_update(messages: Sequence[Message]) -> int:
    """Position of the assistant message with the latest successful update_plan call (-1)."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "assistant" and any(c.name == PLAN_TOOL for c in message.tool_calls):
            results = _results(messages, position)
            if any(plan_of_call(c, results.get(c.id)) is not None for c in message.tool_calls):
                return position
    return -1


def fold_plan(messages: Sequence[Message]) -> list[Message]:
    """`messages` with the plan pinned (see the module docstring). Idempotent; keeps every
    other message object as it is, so an unchanged list comes back identical."""
    plan = current_plan(messages)
    last_update = _last_update(messages)
    existing = next((m for m in messages if m.kind is MessageKind.PLAN), None)
    folded: list[Message] = []
    anchor = ""  # the message the latest plan came after (an editor replays it there)
    position = 0
    while position < len(messages):
        message = messages[position]
        if message.kind is MessageKind.PLAN:
            position += 1
            continue
        end = tool_group_end(messages, position)
        if message.role != "assistant" or not message.tool_calls:
            folded.extend(messages[position:end])
            position = end
            continue
        results = _results(messages, position)
        gone = {
            call.id
            for call in message.tool_calls
            if call.name == PLAN_TOOL
            and call.id in results
            and (position <= last_update or plan_of_call(call, results[call.id]) is not None)
        }
        if not gone:
            folded.extend(messages[position:end])
        else:
            kept = tuple(call for call in message.tool_calls if call.id not in gone)
            if kept or message.content:
                folded.append(message.evolve(tool_calls=kept, id=new_message_id()))
            folded.extend(m for m in messages[position + 1 : end] if m.tool_call_id not in gone)
        if position == last_update and folded:
            anchor = folded[-1].id
        position = end
    if plan:
        pinned = existing if existing is not None and plan_of_message(existing) == plan else None
        latest = latest_user_index(folded)
        at = len(folded) if latest is None else latest + 1
        folded.insert(at, pinned or plan_message(plan, after=anchor))
    return folded


def _apply(conversation: Conversation, new: Sequence[Message]) -> bool:
    """Make `conversation` hold `new` by replacing the one stretch that differs."""
    old = conversation.messages
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] is new[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(old), len(new)) - prefix
        and old[len(old) - 1 - suffix] is new[len(new) - 1 - suffix]
    ):
        suffix += 1
    if prefix == len(old) == len(new):
        return False
    conversation.replace_range(prefix, len(old) - suffix, new[prefix : len(new) - suffix])
    return True


class PlanPin:
    """Keeps one conversation's plan pinned. Cheap when nothing relevant was appended: only a
    new user message or an `update_plan` call can move or change the plan."""

    def __init__(self) -> None:
        self._cursor = AppendCursor()

    def pin(self, conversation: Conversation) -> bool:
        """Fold the conversation's plan in place; True if anything changed."""
        restarted, fresh = self._cursor.new_messages(conversation)
        if not restarted and not any(
            (message.role == "user" and message.kind is MessageKind.NORMAL)
            or any(call.name == PLAN_TOOL for call in message.tool_calls)
            for message in fresh
        ):
            return False
        changed = _apply(conversation, fold_plan(conversation.messages))
        if changed:
            self._cursor.new_messages(conversation)  # our own change needs no second look
        return changed
