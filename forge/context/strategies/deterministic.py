"""What the deterministic tiers share: no LLM call, a trigger, and an `apply` that edits in place.

The ingest cap (tier 0) and observation masking (tier 1) are deterministic: they cost no
request, cannot fail on a provider, and run before any LLM strategy. The runner runs them with
the same started/completed events as a summary run, with model "none".

`AppendCursor` lets a tier look only at what was appended since its last look (O(new) per LLM
call); a change that moves messages (a summary swapped in) makes it start over once, while an
output masked or cut in place need not (the tier says which in-place changes concern it).

`in_place` tiers (ingest cap, masking; `Capabilities.in_place`) only replace an output by a
same-shaped one, so the runner checks their edits (`Conversation.kept_shape_since`, O(edits))
instead of validating the whole list before each run.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation, same_shape
from forge.context.strategies.contract import ContextStrategy, StrategyRun
from forge.llm.messages import Message
from forge.llm.protocols import Provider, TokenCounter


@dataclass(slots=True)
class _Seen:
    conversation_id: int
    version: int
    length: int


class AppendCursor:
    """Tells what was appended to a conversation since the last call of `new_messages`.

    Any change other than appends makes the next call start over (`restarted`), except
    in-place replacements (one message for one, e.g. an output masked or cut) that the reader
    says it can take: with `relevant`, a replacement where neither the old nor the new message
    is relevant is not news; with `follow`, in-place replacements of messages already seen are
    listed in `replaced` (their positions) for the reader to handle. Both cost O(edits)."""

    def __init__(
        self, relevant: Callable[[Message], bool] | None = None, *, follow: bool = False
    ) -> None:
        self._seen: _Seen | None = None
        self._relevant = relevant
        self._follow = follow
        self.replaced: list[int] = []
        """With `follow`: positions (< the length seen last time) replaced in place since."""

    def new_messages(self, conversation: Conversation) -> tuple[bool, list[Message]]:
        """(restarted, messages): the messages appended since the last call, or every message
        with `restarted` True when anything else changed (or on the first call)."""
        seen = self._seen
        length = len(conversation)
        self.replaced = []
        appended_only = seen is not None and self._appended_only(conversation, seen)
        start = seen.length if appended_only and seen is not None else 0
        fresh = [conversation[index] for index in range(start, length)]
        self._seen = _Seen(id(conversation), conversation.version, length)
        return not appended_only, fresh

    def _appended_only(self, conversation: Conversation, seen: _Seen) -> bool:
        length = len(conversation)
        if seen.conversation_id != id(conversation) or length < seen.length:
            return False
        edits = conversation.edits_since(seen.version)
        if edits is None:
            return False
        if conversation.version - seen.version - len(edits) != length - seen.length:
            return False
        replaced: dict[int, None] = {}
        for edit in edits:
            if not edit.in_place:
                return False
            for offset, old in enumerate(edit.removed):
                position = edit.start + offset
                if position >= seen.length:
                    continue  # appended since: among the fresh messages anyway
                if not same_shape(old, conversation[position]):
                    return False  # not an output masked or cut: e.g. a rewind of equal length
                if self._follow:
                    replaced[position] = None
                    continue
                relevant = self._relevant
                if relevant is None or relevant(old) or relevant(conversation[position]):
                    return False
        self.replaced = list(replaced)
        return True

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


class DeterministicStrategy(ContextStrategy):
    """A tier that shrinks the conversation without an LLM call: `run` is `apply`."""

    name: str = "deterministic"

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

    async def run(
        self, conversation: Conversation, provider: Provider | None, run: StrategyRun
    ) -> int:
        """`apply` within the run's budget (no provider is used)."""
        return self.apply(conversation, run.max_tokens, force=run.force)
