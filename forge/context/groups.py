"""The shapes strategies work on: tool-call groups, user turns, and the protected messages.

All positions are indices into one snapshot of the message list. A group or unit always
starts and ends at a safe boundary (see `conversation.safe_boundaries`), so replacing or
removing it whole keeps the list provider-valid.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import pairwise

from forge.context.conversation import safe_boundaries, tool_group_end
from forge.llm.messages import Message, MessageKind

TURN_ENDING_TOOLS = frozenset({"task_completion", "converse"})
"""Tools whose call ends the agent's turn (see `forge.agent.tools.loop_breaking`)."""


@dataclass(frozen=True, slots=True)
class ToolCallGroup:
    """One assistant message with tool calls plus its results: messages[start:end]."""

    start: int
    end: int
    message_ids: tuple[str, ...]
    tool_names: tuple[str, ...]

    def age(self, length: int) -> int:
        """How many messages follow the group in a list of `length` messages."""
        return length - self.end

    def is_excluded(self, excluded_tools: Collection[str]) -> bool:
        """True when any of its calls is an excluded tool (the whole group is then kept)."""
        return any(name in excluded_tools for name in self.tool_names)


@dataclass(frozen=True, slots=True)
class Turn:
    """A real user message and everything up to the next user-role message: [start, end)."""

    start: int
    end: int

    def is_complete(self, messages: Sequence[Message]) -> bool:
        """A finished turn: it ends with a plain answer (an assistant message without tool
        calls), a call of a turn-ending tool, or only summaries of its work."""
        if self.end <= self.start + 1:
            return False
        work = [m for m in messages[self.start + 1 : self.end] if not is_pinned(m)]
        if not work:
            return False
        if all(message.kind is not MessageKind.NORMAL for message in work):
            return True
        last_assistant = next((m for m in reversed(work) if m.role == "assistant"), None)
        if last_assistant is None:
            return False
        if not last_assistant.tool_calls:
            return bool(last_assistant.content)
        return any(call.name in TURN_ENDING_TOOLS for call in last_assistant.tool_calls)


def tool_call_groups(messages: Sequence[Message]) -> list[ToolCallGroup]:
    """Every tool-call group in order."""
    groups: list[ToolCallGroup] = []
    position = 0
    while position < len(messages):
        end = tool_group_end(messages, position)
        message = messages[position]
        if message.role == "assistant" and message.tool_calls:
            groups.append(
                ToolCallGroup(
                    start=position,
                    end=end,
                    message_ids=tuple(m.id for m in messages[position:end]),
                    tool_names=tuple(call.name for call in message.tool_calls),
                )
            )
        position = end
    return groups


def units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """The list cut at every safe boundary: single messages and whole tool-call groups."""
    boundaries = safe_boundaries(messages)
    return list(pairwise(boundaries))


def pending_task_index(messages: Sequence[Message]) -> int | None:
    """Index of the first real user message (the task the session started with), or None."""
    for position, message in enumerate(messages):
        if message.role == "user" and message.kind is MessageKind.NORMAL:
            return position
    return None


def latest_user_index(messages: Sequence[Message]) -> int | None:
    """Index of the latest real user message, or None."""
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if message.role == "user" and message.kind is MessageKind.NORMAL:
            return position
    return None


def head_end(messages: Sequence[Message]) -> int:
    """Index just past the head every operation keeps: the leading system messages, the
    pending task (when the task comes before any assistant message) and the work ledger
    pinned right after them (docs/adr/0050)."""
    position = 0
    while position < len(messages) and messages[position].role == "system":
        position += 1
    task = pending_task_index(messages)
    if task is not None and all(m.role in ("system", "user") for m in messages[:task]):
        position = task + 1
    while position < len(messages) and messages[position].kind is MessageKind.LEDGER:
        position += 1
    return position


def is_instruction(message: Message) -> bool:
    """A message the user wrote (not a summary or goal batch standing in for some)."""
    return message.role == "user" and message.kind is MessageKind.NORMAL


def is_pinned(message: Message) -> bool:
    """The plan message (docs/adr/0028) or the work ledger (docs/adr/0050): kept whole and
    verbatim by every strategy."""
    return message.kind in (MessageKind.PLAN, MessageKind.LEDGER)


def protected_positions(messages: Sequence[Message], excluded_tools: Collection[str]) -> set[int]:
    """Positions nothing may summarize or prune: system messages, every user instruction (the
    pending task and the latest user message among them), the pinned plan and every message of
    a group that calls an excluded tool."""
    protected = {
        i
        for i, message in enumerate(messages)
        if message.role == "system" or is_instruction(message) or is_pinned(message)
    }
    for group in tool_call_groups(messages):
        if group.is_excluded(excluded_tools):
            protected.update(range(group.start, group.end))
    return protected


def user_turns(messages: Sequence[Message]) -> list[Turn]:
    """Every turn that starts with a real user message, in order."""
    starts = [
        i for i, m in enumerate(messages) if m.role == "user" and m.kind is MessageKind.NORMAL
    ]
    turns: list[Turn] = []
    for start in starts:
        end = start + 1
        while end < len(messages) and (messages[end].role != "user" or is_pinned(messages[end])):
            end += 1
        turns.append(Turn(start, end))
    return turns
