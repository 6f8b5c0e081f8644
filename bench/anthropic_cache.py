"""The Anthropic-style prompt-cache price model of the replay (explicit breakpoints).

Anthropic caches only where a request marks a breakpoint (`cache_control`). At each breakpoint
whose prefix holds at least `MINIMUM` tokens, the prefix up to and including that block is
written to the cache (at `WRITE_MULTIPLIER` x the input price) unless it is already there; a
request reads (at `READ_MULTIPLIER` x) the longest cached prefix that ends at a block boundary
no more than `LOOKBACK` blocks before one of its breakpoints. Tokens after the read, up to the
last breakpoint, are written; tokens after the last breakpoint are plain input. Every request of
a replay is taken to come within the cache's 5-minute lifetime, so nothing expires.

A request is the replay's list of segments (`bench.cache_model`): the tools block, one segment
per message (the system prompt first when there is one), the reply priming. Blocks are those
segments. Where the breakpoints go: given the request's roles, where Forge's Anthropic provider
puts them (`provider_breakpoints`, from `forge.llm.anthropic_cache`): the tools, the system
prompt, and the newest and third-newest messages once consecutive same-role messages are
merged as the API requires (tool results are user turns); without roles, `breakpoints`: the
tools, the system prompt and the newest two messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.cache_model import Segment
from forge.llm.anthropic_cache import message_breakpoints

MINIMUM = 1024
"""A breakpoint whose prefix is shorter than this is not cached (Claude Sonnet's minimum)."""
LOOKBACK = 20
"""Blocks before a breakpoint the cache looks back through for an earlier entry."""
WRITE_MULTIPLIER = 1.25
READ_MULTIPLIER = 0.1

Placement = Callable[[Sequence[Segment], bool], list[int]]
"""(request segments, whether it has a system prompt) -> indices of the breakpoint blocks."""


def breakpoints(segments: Sequence[Segment], has_system: bool) -> list[int]:
    """Breakpoints on the tools block, the system prompt and the newest two messages (the
    stand-in used before the provider existed; requests without roles).

    Segment 0 is the tools block, the last is the reply priming (never a breakpoint)."""
    messages = range(1, len(segments) - 1)
    marks = {0} if segments and segments[0] else set()
    if has_system and len(messages):
        marks.add(1)
    marks.update(list(messages)[-2:])
    return sorted(marks)


def provider_breakpoints(
    segments: Sequence[Segment], has_system: bool, roles: Sequence[str]
) -> list[int]:
    """Where Forge's Anthropic provider puts the breakpoints of a request whose messages
    (the system prompt first when `has_system`) have `roles`: the tools block, the system
    prompt, and the last part of the merged messages `message_breakpoints` names."""
    marks = {0} if segments and segments[0] else set()
    first = 0
    if has_system and roles:
        marks.add(1)
        first = 1
    ends: list[int] = []  # per merged message, the index (into roles) of its last part
    previous = ""
    for index in range(first, len(roles)):
        role = "user" if roles[index] == "tool" else roles[index]
        if ends and role == previous:
            ends[-1] = index
        else:
            ends.append(index)
            previous = role
    marks.update(1 + ends[merged] for merged in message_breakpoints(len(ends)))
    return sorted(marks)


@dataclass
class Charge:
    """One request's prompt tokens under the model."""

    read: int = 0
    written: int = 0
    uncached: int = 0


class AnthropicCache:
    """The cache one replay run builds up, request after request."""

    def __init__(self, placement: Placement = breakpoints) -> None:
        self.placement = placement
        self._entries: set[int] = set()
        self._hashes: dict[int, tuple[Segment, int]] = {}

    def _hash(self, segment: Segment) -> int:
        known = self._hashes.get(id(segment))
        if known is None or known[0] is not segment:
            known = self._hashes[id(segment)] = (segment, hash(segment))
        return known[1]

    def _prefixes(self, segments: Sequence[Segment]) -> tuple[list[int], list[int]]:
        """Per block: the key of the prefix ending there and its length in tokens."""
        keys, ends = [], []
        key, length = 0, 0
        for segment in segments:
            key = hash((key, self._hash(segment)))
            length += len(segment)
            keys.append(key)
            ends.append(length)
        return keys, ends

    def peek(
        self, segments: Sequence[Segment], has_system: bool, roles: Sequence[str] | None = None
    ) -> Charge:
        """What the request would cost in reads and writes, without changing the cache."""
        return self._charge(segments, has_system, roles, commit=False)

    def charge(
        self, segments: Sequence[Segment], has_system: bool, roles: Sequence[str] | None = None
    ) -> Charge:
        """What the request costs; its breakpoints' prefixes are cached afterwards. With the
        messages' `roles`, the breakpoints are the provider's (`provider_breakpoints`)."""
        return self._charge(segments, has_system, roles, commit=True)

    def _charge(
        self,
        segments: Sequence[Segment],
        has_system: bool,
        roles: Sequence[str] | None,
        commit: bool,
    ) -> Charge:
        keys, ends = self._prefixes(segments)
        total = ends[-1] if ends else 0
        if roles is None:
            marks = self.placement(segments, has_system)
        else:
            marks = provider_breakpoints(segments, has_system, roles)
        read = 0
        for mark in marks:
            for block in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if keys[block] in self._entries:
                    read = max(read, ends[block])
                    break
        last = ends[marks[-1]] if marks else 0
        written = 0
        if last >= MINIMUM and last > read:
            written = last - read
        if commit:
            self._entries.update(keys[mark] for mark in marks if ends[mark] >= MINIMUM)
        return Charge(read=read, written=written, uncached=total - read - written)
