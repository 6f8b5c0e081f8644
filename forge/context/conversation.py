"""The conversation: an ordered list of messages with the rules that keep it provider-valid.

It lives in `context` (not `agent`) because the strategies rewrite it, and dependencies point
one way (agent -> context). Observers (the session log) hear every append and replacement.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from forge.llm.messages import Message, MessageKind
from forge.llm.wire_format import chat_messages


class ConversationObserver(Protocol):
    """Hears every change, e.g. to append it to the session file."""

    def on_append(self, message: Message) -> None:
        """A message was appended."""
        ...

    def on_replace(self, removed: Sequence[Message], inserted: Sequence[Message]) -> None:
        """`removed` (contiguous, in order) were replaced in place by `inserted`."""
        ...


CANCELLED_RESULT = "[cancelled: the tool call did not run to completion]"
EDIT_LOG_LENGTH = 256
"""Replacements a conversation remembers (`edits_since`); a reader further behind rescans."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One replacement: at `version`, messages[start:start + len(removed)] became `inserted`
    messages (appends are not logged: they are what the versions not logged did)."""

    version: int
    start: int
    removed: tuple[Message, ...]
    inserted: int

    @property
    def in_place(self) -> bool:
        """As many messages in as out: every later position is unchanged."""
        return len(self.removed) == self.inserted


def same_shape(old: Message, new: Message) -> bool:
    """Whether replacing `old` by `new` leaves the list exactly as valid as it was (same role,
    same tool call answered, same calls made, not an empty assistant message): a masked,
    pruned or cut output stands where its original stood."""
    return (
        old.role == new.role
        and old.tool_call_id == new.tool_call_id
        and [call.id for call in old.tool_calls] == [call.id for call in new.tool_calls]
        and (new.role != "assistant" or bool(new.content or new.tool_calls))
    )


class Conversation:
    """Messages in order, a version that changes on every edit, and validity checks."""

    def __init__(self, messages: Sequence[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)
        self._observers: list[ConversationObserver] = []
        self.version = 0
        """Increments on every change; a background job compares it before swapping results."""
        self._edits: deque[Edit] = deque(maxlen=EDIT_LOG_LENGTH)
        self._forgotten = 0
        """The version of the newest edit that fell out of the log."""

    # --- reading -------------------------------------------------------------------------
    @property
    def messages(self) -> tuple[Message, ...]:
        """A snapshot of the messages."""
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(tuple(self._messages))

    def __getitem__(self, index: int) -> Message:
        return self._messages[index]

    def index_of(self, message_id: str) -> int:
        """Position of the message with this id; ValueError if absent."""
        for position, message in enumerate(self._messages):
            if message.id == message_id:
                return position
        raise ValueError(f"no message with id {message_id}")

    def latest_user_index(self) -> int | None:
        """Index of the latest real user message (not a summary), or None."""
        for position in range(len(self._messages) - 1, -1, -1):
            message = self._messages[position]
            if message.role == "user" and message.kind is MessageKind.NORMAL:
                return position
        return None

    def to_api(self) -> list[dict[str, object]]:
        """The provider payload (Chat Completions; a tool's images follow its results)."""
        return list(chat_messages(self._messages))

    # --- changing ------------------------------------------------------------------------
    def add_observer(self, observer: ConversationObserver) -> None:
        """Register an observer of every future change."""
        self._observers.append(observer)

    def append(self, message: Message) -> None:
        """Append one message."""
        self._messages.append(message)
        self.version += 1
        for observer in self._observers:
            observer.on_append(message)

    def replace_range(self, start: int, end: int, inserted: Sequence[Message]) -> None:
        """Replace messages[start:end] by `inserted` (summaries, pruned markers)."""
        if not 0 <= start <= end <= len(self._messages):
            raise IndexError(f"bad range {start}:{end} for {len(self._messages)} messages")
        removed = self._messages[start:end]
        self._messages[start:end] = list(inserted)
        self.version += 1
        if len(self._edits) == EDIT_LOG_LENGTH:
            self._forgotten = self._edits[0].version
        self._edits.append(Edit(self.version, start, tuple(removed), len(inserted)))
        for observer in self._observers:
            observer.on_replace(removed, list(inserted))

    def replace_message(self, index: int, message: Message) -> None:
        """Replace one message in place."""
        self.replace_range(index, index + 1, [message])

    def edits_since(self, version: int) -> list[Edit] | None:
        """The replacements made after `version`, oldest first (appends are the other
        changes), or None when the log no longer reaches back that far. O(edits returned)."""
        if version < self._forgotten:
            return None
        edits: list[Edit] = []
        for edit in reversed(self._edits):
            if edit.version <= version:
                break
            edits.append(edit)
        edits.reverse()
        return edits

    def kept_shape_since(self, version: int) -> bool:
        """Whether every change since `version` was an append or an in-place replacement of
        same-shaped messages (`same_shape`): a list valid then is valid now. O(edits)."""
        edits = self.edits_since(version)
        if edits is None:
            return False
        for edit in edits:
            if not edit.in_place:
                return False
            for offset, old in enumerate(edit.removed):
                # Compared with what stands there now: all edits being in place, positions
                # hold, and a chain A -> B -> C keeps the shape when A and B match C.
                position = edit.start + offset
                if position >= len(self._messages) or not same_shape(old, self._messages[position]):
                    return False
        return True

    # --- validity ------------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Every way the list breaks the provider's rules; empty when valid."""
        return find_problems(self._messages)

    def is_valid(self) -> bool:
        """True when the provider would accept this list."""
        return not self.problems()


def find_problems(messages: Sequence[Message]) -> list[str]:
    """Check the invariant: each assistant tool call has exactly one result, right after it,
    in call order; no orphan results; no empty assistant message."""
    problems: list[str] = []
    position = 0
    while position < len(messages):
        message = messages[position]
        if message.role == "assistant":
            if not message.content and not message.tool_calls:
                problems.append(f"message {position}: empty assistant message")
            expected = [call.id for call in message.tool_calls]
            for offset, call_id in enumerate(expected, start=1):
                index = position + offset
                if index >= len(messages):
                    problems.append(f"message {position}: tool call {call_id} has no result")
                    continue
                result = messages[index]
                if result.role != "tool" or result.tool_call_id != call_id:
                    problems.append(
                        f"message {index}: expected result for {call_id}, found {result.role}"
                    )
            position += 1 + sum(
                1
                for offset in range(1, len(expected) + 1)
                if position + offset < len(messages) and messages[position + offset].role == "tool"
            )
            continue
        if message.role == "tool":
            problems.append(f"message {position}: tool result {message.tool_call_id} is orphaned")
        position += 1
    return problems


def tool_group_end(messages: Sequence[Message], start: int) -> int:
    """If messages[start] is an assistant message with tool calls, the index just past its
    results; otherwise start + 1. Slicing at group ends never splits a call from its result."""
    message = messages[start]
    end = start + 1
    if message.role == "assistant" and message.tool_calls:
        ids = {call.id for call in message.tool_calls}
        while (
            end < len(messages)
            and messages[end].role == "tool"
            and (messages[end].tool_call_id in ids)
        ):
            end += 1
    return end


def safe_boundaries(messages: Sequence[Message]) -> list[int]:
    """Indices where the list may be cut without splitting a tool-call group (0 and len too)."""
    boundaries = [0]
    position = 0
    while position < len(messages):
        position = tool_group_end(messages, position)
        boundaries.append(position)
    return boundaries


def repair(messages: Sequence[Message]) -> list[Message]:
    """Make any list valid: drop orphan results and empty assistant messages, give unanswered
    calls a cancelled result. Deterministic; needs no LLM."""
    repaired: list[Message] = []
    position = 0
    while position < len(messages):
        message = messages[position]
        if message.role == "tool":
            position += 1  # orphan: its call is not directly before it
            continue
        if message.role == "assistant" and message.tool_calls:
            results: dict[str, Message] = {}
            cursor = position + 1
            ids = [call.id for call in message.tool_calls]
            while cursor < len(messages) and messages[cursor].role == "tool":
                result = messages[cursor]
                if result.tool_call_id in ids and result.tool_call_id not in results:
                    results[result.tool_call_id or ""] = result
                cursor += 1
            repaired.append(message)
            for call in message.tool_calls:
                repaired.append(
                    results.get(call.id)
                    or Message(
                        role="tool",
                        content=CANCELLED_RESULT,
                        tool_call_id=call.id,
                        name=call.name,
                        meta={"cancelled": True},
                    )
                )
            position = cursor
            continue
        if message.role == "assistant" and not message.content:
            position += 1
            continue
        repaired.append(message)
        position += 1
    return repaired
