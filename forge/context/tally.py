"""Incremental bookkeeping of a conversation, so the check before every LLM call costs only what
was added since the last one (O(new messages)), not a walk over the whole history.

`Tallies` (one per manager, for its token counter) keeps one `ConversationTally` per
conversation it has seen. A tally observes its conversation (`Conversation.add_observer`):

- `tokens`: the local count of the whole list, exactly `counter.count_messages(messages)`.
  Appended messages are counted lazily, at the next question; a replacement subtracts what it
  removed and adds what it inserted (both counted, cheap with the per-message cache);
- `length`, `non_system`: message counts;
- `replacements`: how many in-place replacements (summaries, masks, prunes) happened so far,
  so a caller can tell "only appended since" from "something shrank since";
- `groups()`: the tool-call groups in order (as `groups.tool_call_groups` gives them), extended
  as messages arrive and rebuilt once after a replacement (positions move);
- `eligible_groups(excluded)`: the groups calling none of the excluded tools, extended the same
  way, with their end positions for bisecting by age (`aged_count`);
- `user_positions()`: the positions of the real user messages (role "user", kind NORMAL), the
  starts of the user turns, extended the same way.

Nothing here reads `Conversation.messages` (a full copy) on the hot path; positions are read
one by one. A tally whose manager is gone stops working (its observer holds it weakly).
"""

from __future__ import annotations

import weakref
from bisect import bisect_right
from collections.abc import Collection, Sequence

from forge.context.conversation import Conversation
from forge.context.groups import ToolCallGroup
from forge.llm.messages import Message, MessageKind
from forge.llm.protocols import TokenCounter


class _Observer:
    """What the conversation holds: forwards changes to a tally while that tally lives."""

    def __init__(self, tally: ConversationTally) -> None:
        self._tally = weakref.ref(tally)

    def on_append(self, message: Message) -> None:
        tally = self._tally()
        if tally is not None:
            tally.on_append(message)

    def on_replace(self, removed: Sequence[Message], inserted: Sequence[Message]) -> None:
        tally = self._tally()
        if tally is not None:
            tally.on_replace(removed, inserted)


class ConversationTally:
    """Running counts for one conversation; see the module docstring."""

    def __init__(self, conversation: Conversation, counter: TokenCounter) -> None:
        self._conversation = weakref.ref(conversation)  # Tallies keys on it weakly
        self.counter = counter
        probe = Message(role="user")
        self.reply_priming = counter.count_messages([probe]) - counter.count_message(probe)
        self.replacements = 0
        self._message_tokens = 0
        self._non_system = 0
        self._pending: list[Message] = list(conversation)
        self._groups: list[ToolCallGroup] = []
        self._scan_from = 0
        self._eligible: dict[frozenset[str], _EligibleGroups] = {}
        self._user_positions: list[int] = []
        self._users_scanned = 0
        conversation.add_observer(_Observer(self))

    @property
    def conversation(self) -> Conversation:
        """The conversation this tally follows."""
        conversation = self._conversation()
        if conversation is None:
            raise ReferenceError("the conversation of this tally is gone")
        return conversation

    # --- observer --------------------------------------------------------------------------
    def on_append(self, message: Message) -> None:
        """A message was appended: counted at the next question."""
        self._pending.append(message)

    def on_replace(self, removed: Sequence[Message], inserted: Sequence[Message]) -> None:
        """`removed` became `inserted` in place: adjust the counts, rebuild the group index."""
        self._drain()
        count = self.counter.count_message
        self._message_tokens += sum(count(m) for m in inserted) - sum(count(m) for m in removed)
        self._non_system += sum(m.role != "system" for m in inserted) - sum(
            m.role != "system" for m in removed
        )
        self.replacements += 1
        self._groups = []
        self._scan_from = 0
        self._eligible.clear()
        self._user_positions = []
        self._users_scanned = 0

    def _drain(self) -> None:
        if not self._pending:
            return
        count = self.counter.count_message
        pending, self._pending = self._pending, []
        self._message_tokens += sum(count(message) for message in pending)
        self._non_system += sum(message.role != "system" for message in pending)

    # --- counts ----------------------------------------------------------------------------
    @property
    def length(self) -> int:
        """Messages in the conversation."""
        return len(self.conversation)

    @property
    def tokens(self) -> int:
        """The local token count of the whole list (`count_messages` of it)."""
        self._drain()
        return self._message_tokens + self.reply_priming if len(self.conversation) else 0

    @property
    def non_system(self) -> int:
        """Messages whose role is not "system"."""
        self._drain()
        return self._non_system

    # --- tool-call groups ------------------------------------------------------------------
    def groups(self) -> list[ToolCallGroup]:
        """Every tool-call group in order, as `groups.tool_call_groups` would list them. The
        last one may still grow while its results arrive. Do not modify the list."""
        conversation = self.conversation
        length = len(conversation)
        position = self._scan_from
        if self._groups and self._groups[-1].start >= position:
            self._groups.pop()  # the open group at the end: scanned again
        while position < length:
            message = conversation[position]
            if message.role != "assistant" or not message.tool_calls:
                position += 1
                self._scan_from = position
                continue
            ids = {call.id for call in message.tool_calls}
            end = position + 1
            while (
                end < length
                and conversation[end].role == "tool"
                and conversation[end].tool_call_id in ids
            ):
                end += 1
            group = ToolCallGroup(
                start=position,
                end=end,
                message_ids=tuple(conversation[i].id for i in range(position, end)),
                tool_names=tuple(call.name for call in message.tool_calls),
            )
            self._groups.append(group)
            if end == length:
                self._scan_from = position  # more results may follow
                break
            position = end
            self._scan_from = position
        return self._groups

    def user_positions(self) -> list[int]:
        """Positions of the real user messages (role "user", kind NORMAL) in order: where the
        user turns start. Do not modify the list."""
        conversation = self.conversation
        for position in range(self._users_scanned, len(conversation)):
            message = conversation[position]
            if message.role == "user" and message.kind is MessageKind.NORMAL:
                self._user_positions.append(position)
        self._users_scanned = len(conversation)
        return self._user_positions

    def eligible_groups(self, excluded_tools: Collection[str]) -> _EligibleGroups:
        """The closed groups calling none of `excluded_tools`, oldest first (a group still
        at the very end of the list is left out until a later message closes it)."""
        key = frozenset(excluded_tools)
        eligible = self._eligible.get(key)
        if eligible is None:
            eligible = self._eligible[key] = _EligibleGroups(key)
        groups = self.groups()
        closed = len(groups)
        if groups and groups[-1].end == len(self.conversation):
            closed -= 1
        eligible.extend(groups, closed)
        return eligible


class _EligibleGroups:
    """Groups not calling an excluded tool, with their ends for bisecting by age."""

    def __init__(self, excluded: frozenset[str]) -> None:
        self.excluded = excluded
        self.groups: list[ToolCallGroup] = []
        self.ends: list[int] = []
        self.position_of: dict[str, int] = {}
        """First message id of a group -> its index in `groups`."""
        self._seen = 0

    def extend(self, groups: Sequence[ToolCallGroup], closed: int) -> None:
        for group in groups[self._seen : closed]:
            if not group.is_excluded(self.excluded):
                self.position_of[group.message_ids[0]] = len(self.groups)
                self.groups.append(group)
                self.ends.append(group.end)
        self._seen = max(self._seen, closed)

    def aged_count(self, latest_end: int) -> int:
        """How many of the groups end at or before `latest_end` (they come first)."""
        return bisect_right(self.ends, latest_end)


class Tallies:
    """One `ConversationTally` per conversation, for one token counter."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._tallies: weakref.WeakKeyDictionary[Conversation, ConversationTally] = (
            weakref.WeakKeyDictionary()
        )

    def of(self, conversation: Conversation) -> ConversationTally:
        """The tally of `conversation` (started, with one full count, the first time)."""
        tally = self._tallies.get(conversation)
        if tally is None:
            tally = self._tallies[conversation] = ConversationTally(conversation, self.counter)
        return tally
