"""What the deterministic tiers share: no LLM call, a trigger, and an `apply` that edits in place.

The ingest cap (tier 0) and observation masking (tier 1) are deterministic: they cost no
request, cannot fail on a provider, and run before any LLM strategy. The manager runs them with
the same started/completed events as a summary run, with model "none".

`AppendCursor` lets a tier look only at what was appended since its last look (O(new) per LLM
call); any other change (a summary swapped in, a pruned output) makes it start over once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.llm.messages import Message
from forge.llm.protocols import TokenCounter


@dataclass(slots=True)
class _Seen:
    conversation_id: int
    version: int
    length: int
    last_id: str | None


class AppendCursor:
    """Tells what was appended to a conversation since the last call of `new_messages`."""

    def __init__(self) -> None:
        self._seen: _Seen | None = None

    def new_messages(self, conversation: Conversation) -> tuple[bool, list[Message]]:
        """(restarted, messages): the messages appended since the last call, or every message
        with `restarted` True when anything else changed (or on the first call)."""
        seen = self._seen
        length = len(conversation)
        appended_only = (
            seen is not None
            and seen.conversation_id == id(conversation)
            and length >= seen.length
            and conversation.version - seen.version == length - seen.length
            and (seen.length == 0 or conversation[seen.length - 1].id == seen.last_id)
        )
        start = seen.length if appended_only and seen is not None else 0
        fresh = [conversation[index] for index in range(start, length)]
        last_id = conversation[length - 1].id if length else None
        self._seen = _Seen(id(conversation), conversation.version, length, last_id)
        return not appended_only, fresh

    def reset(self) -> None:
        """Forget what was seen: the next call returns every message."""
        self._seen = None


def excluded_call_ids(messages: Iterable[Message], excluded_tools: Collection[str]) -> set[str]:
    """Ids of every call made in the same assistant message as a call of an excluded tool:
    such a group is kept whole, parallel calls included."""
    ids: set[str] = set()
    for message in messages:
        if any(call.name in excluded_tools for call in message.tool_calls):
            ids.update(call.id for call in message.tool_calls)
    return ids


class DeterministicStrategy(ABC):
    """A tier that shrinks the conversation without an LLM call."""

    name: str = "deterministic"
    forceable: bool = True
    """Whether /compact and the auto-summary threshold may run it regardless of its trigger."""
    token_triggered: bool = False

    def __init__(self, settings: ContextSettings, counter: TokenCounter) -> None:
        self.settings = settings
        self.counter = counter

    @abstractmethod
    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Whether this tier's own trigger fires now."""

    @abstractmethod
    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        """How many items a run now would change."""

    @abstractmethod
    def apply(self, conversation: Conversation, max_tokens: int, *, force: bool = False) -> int:
        """Shrink in place; returns how many items were changed."""
