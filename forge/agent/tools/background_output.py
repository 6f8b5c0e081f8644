"""A background command's output: kept bounded, read from the start or from an offset.

A dev server can print for hours, so only the first `head_chars` and the latest `tail_chars`
characters are kept. Every character has an offset (its position in everything the command
printed); `read(since)` returns what is kept from that offset on, head and tail joined by the
usual elision marker where the middle was dropped, and the offset to ask from next time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from forge.agent.tools.output import HeadTailBuffer


@dataclass(frozen=True, slots=True)
class OutputSlice:
    """What `BackgroundOutput.read` returns: the text (bounded) and the next offset."""

    text: str
    next_offset: int
    elided: bool


class BackgroundOutput:
    """Thread-safe store of one command's output (written by its reader thread)."""

    def __init__(self, head_chars: int, tail_chars: int) -> None:
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self._lock = threading.Lock()
        self._head = ""
        self._tail = ""
        self._total = 0

    @property
    def total(self) -> int:
        """Characters printed so far (kept or not)."""
        return self._total

    def add(self, text: str) -> None:
        """Append `text` (already masked)."""
        if not text:
            return
        with self._lock:
            self._total += len(text)
            room = self.head_chars - len(self._head)
            if room > 0:
                self._head += text[:room]
                text = text[room:]
            self._tail += text
            if len(self._tail) > 2 * self.tail_chars:
                self._tail = self._tail[-self.tail_chars :]

    def read(self, since: int = 0, limit_chars: int | None = None) -> OutputSlice:
        """What was printed from offset `since` on (all of it when 0), bounded to about
        `limit_chars` (head and tail kept; default: the store's own bounds)."""
        with self._lock:
            head, tail, total = self._head, self._tail[-self.tail_chars :], self._total
        since = max(0, min(since, total))
        tail_start = total - len(tail)
        pieces: list[str] = []
        dropped = 0
        if since < len(head):
            pieces.append(head[since:])
            if tail_start > len(head):
                dropped = tail_start - len(head)
            pieces.append(tail[max(0, len(head) - tail_start) :])
        elif since < tail_start:
            dropped = tail_start - since
            pieces.append(tail)
        else:
            pieces.append(tail[since - tail_start :])
        if dropped:
            first = pieces[0] if len(pieces) > 1 else ""
            if first and not first.endswith("\n"):
                first += "\n"
            text = f"{first}[... {dropped} characters elided ...]\n{pieces[-1]}"
        else:
            text = "".join(pieces)
        if limit_chars is not None and len(text) > limit_chars:
            bounded = HeadTailBuffer(limit_chars // 2, limit_chars // 2)
            bounded.add(text)
            text = bounded.render()
            return OutputSlice(text, total, True)
        return OutputSlice(text, total, bool(dropped))
