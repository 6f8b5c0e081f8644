"""Which outputs masking keeps: by how likely they are to be needed, not only by age.

Issue 23 (ADR 0038). Besides the newest `mask_keep_recent` outputs, masking keeps
- an output the assistant has since referred to (an identifier or path of 6+ characters from it
  in later assistant text or tool-call arguments), while it is among the newest
  `KEEP_REFERENCED_WITHIN` outputs;
- the output of the latest failing command (a non-zero exit code), until the same command runs
  again;
and it masks first, even among the newest, an output *superseded* by a later call with the same
key (the same file read again with the same range, the same command run again).

Everything here is O(new) per LLM call: each output's key and identifiers are taken once, on
arrival; identifiers are kept only for the outputs still inside the referencing window.
"""

from __future__ import annotations

import re
from collections import deque

from forge.context.ledger import command_of, exit_code_of, key_arguments
from forge.llm.messages import Message, ToolCall

KEEP_REFERENCED_WITHIN = 8
"""An output the assistant referred to stays while it is among this many newest outputs."""
IDENTIFIER = re.compile(r"[\w.\-]*/[\w.\-/]*[\w\-]|(?<![\w.])[A-Za-z_][A-Za-z0-9_]{5,}")
"""What counts as a reference: a path (holds a slash) or an identifier of 6+ characters."""
SUPERSEDED_FIRST = True
"""Mask an output a later call with the same key made stale, even among the newest."""
KEEP_FAILING = True
"""Keep the output of the latest failing command until that command runs again."""
MAX_IDENTIFIERS = 2000
"""Identifiers remembered per output (a huge output is judged by its first ones)."""


def identifiers(text: str) -> set[str]:
    """The distinct references `text` could make or hold."""
    found: set[str] = set()
    for match in IDENTIFIER.finditer(text):
        found.add(match.group(0))
        if len(found) >= MAX_IDENTIFIERS:
            break
    return found


class OutputNeeds:
    """What is known of each output (by position) that says whether it will be needed."""

    def __init__(self, keep_referenced_within: int | None = None) -> None:
        self.keep_referenced_within = (
            KEEP_REFERENCED_WITHIN if keep_referenced_within is None else keep_referenced_within
        )
        self._latest_by_key: dict[str, int] = {}
        self.superseded: set[int] = set()
        """Outputs a later call with the same key made stale."""
        self.referenced: set[int] = set()
        """Outputs the assistant referred to after they arrived."""
        self._window: deque[tuple[int, set[str]]] = deque()
        """(position, identifiers) of the newest outputs, for the reference check."""
        self.failing: int | None = None
        """The output of the latest failing command, unless that command ran again since."""
        self._failing_key: str | None = None

    def clear(self) -> None:
        """Forget everything (the conversation changed other than by appends)."""
        self.__init__()  # type: ignore[misc]

    def output(self, position: int, message: Message, call: ToolCall | None) -> None:
        """A tool output (or observation) arrived at `position`."""
        if call is not None:
            key = key_arguments(call, limit=400)
            previous = self._latest_by_key.get(key)
            if previous is not None and SUPERSEDED_FIRST:
                self.superseded.add(previous)
                self.referenced.discard(previous)
            self._latest_by_key[key] = position
            if command_of(call) is not None:
                code = exit_code_of(message)
                if code not in (None, 0):
                    self.failing, self._failing_key = position, key
                elif key == self._failing_key:
                    self.failing = self._failing_key = None  # the same command now passes
        self._window.append((position, identifiers(message.content)))
        while len(self._window) > self.keep_referenced_within:
            self._window.popleft()

    def assistant(self, message: Message) -> None:
        """An assistant message arrived: the outputs in the window it refers to are kept."""
        if not self._window:
            return
        text = "\n".join([message.content, *(call.arguments for call in message.tool_calls)])
        mentioned = identifiers(text)
        if not mentioned:
            return
        for position, held in self._window:
            if position not in self.superseded and not mentioned.isdisjoint(held):
                self.referenced.add(position)

    def kept(self, newest: list[int]) -> set[int]:
        """Positions to keep now, given the newest `mask_keep_recent` output positions and
        the window: recent unless superseded, referenced within the window, the failing run."""
        keep = {position for position in newest if position not in self.superseded}
        keep.update(
            position
            for position, _ in self._window
            if position in self.referenced and position not in self.superseded
        )
        if self.failing is not None and KEEP_FAILING:
            keep.add(self.failing)
        return keep
