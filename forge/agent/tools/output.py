"""Bounding what a tool returns: keep the head and the tail, say how much was elided.

The start of output usually says what ran and the end says how it finished, so both are kept
and the middle is replaced by one marker line with the number of lines and characters dropped.
`HeadTailBuffer` does this in constant memory for streams of any length.
"""

from __future__ import annotations

from collections.abc import Sequence


class HeadTailBuffer:
    """Collects text, keeping at most `head_chars` from the start and `tail_chars` from the end.

    `render()` returns everything if it fit, else head + "[... N lines (M characters) elided
    ...]" + tail, cut at line boundaries where the kept parts contain one.
    """

    def __init__(self, head_chars: int, tail_chars: int) -> None:
        self.head_chars = head_chars
        self.tail_chars = tail_chars
        self._head_parts: list[str] = []
        self._head_size = 0
        self._tail = ""
        self._elided_chars = 0
        self._elided_newlines = 0

    @property
    def elided(self) -> bool:
        """Whether anything has been dropped so far."""
        return self._elided_chars > 0 or len(self._tail) > self.tail_chars

    def add(self, text: str) -> None:
        """Append `text` to the collected output."""
        room = self.head_chars - self._head_size
        if room > 0:
            taken = text[:room]
            self._head_parts.append(taken)
            self._head_size += len(taken)
            text = text[room:]
        if not text:
            return
        self._tail += text
        # Trim only once the tail is twice its limit, so appends stay amortized O(1).
        if len(self._tail) > 2 * self.tail_chars:
            self._drop_tail_prefix(len(self._tail) - self.tail_chars)

    def render(self) -> str:
        """The collected output, head + marker + tail if anything was elided."""
        head = "".join(self._head_parts)
        if len(self._tail) > self.tail_chars:
            self._drop_tail_prefix(len(self._tail) - self.tail_chars)
        if self._elided_chars == 0:
            return head + self._tail
        elided_chars = self._elided_chars
        elided_newlines = self._elided_newlines
        # Cut the head after its last full line and the tail before its first full line, so the
        # marker never splits a line; the partial lines count as elided.
        cut = head.rfind("\n")
        if cut != -1:
            elided_chars += len(head) - (cut + 1)
            head = head[: cut + 1]
        tail = self._tail
        cut = tail.find("\n")
        if cut != -1 and cut + 1 < len(tail):
            elided_chars += cut + 1
            elided_newlines += 1
            tail = tail[cut + 1 :]
        if head and not head.endswith("\n"):
            head += "\n"
        marker = elision_marker(elided_newlines, elided_chars)
        return f"{head}{marker}\n{tail}"

    def _drop_tail_prefix(self, count: int) -> None:
        dropped = self._tail[:count]
        self._elided_chars += len(dropped)
        self._elided_newlines += dropped.count("\n")
        self._tail = self._tail[count:]


def elision_marker(lines: int, characters: int | None = None) -> str:
    """The marker that stands for dropped output, e.g. "[... 120 lines elided ...]"."""
    noun = "line" if lines == 1 else "lines"
    if characters is None:
        return f"[... {lines} {noun} elided ...]"
    return f"[... {lines} {noun} ({characters} characters) elided ...]"


def head_and_tail_lines(
    lines: Sequence[str], max_lines: int, max_chars: int
) -> tuple[list[str], int, list[str]]:
    """Split `lines` into (head, number elided, tail) so that at most `max_lines` lines and
    about `max_chars` characters are kept, half from each end. Nothing is elided if it fits."""
    if len(lines) <= max_lines and sum(len(line) + 1 for line in lines) <= max_chars:
        return list(lines), 0, []
    head = _take_within(lines, max_lines // 2, max_chars // 2)
    remaining = lines[len(head) :]
    tail = list(reversed(_take_within(list(reversed(remaining)), max_lines // 2, max_chars // 2)))
    return head, len(lines) - len(head) - len(tail), tail


def _take_within(lines: Sequence[str], max_lines: int, max_chars: int) -> list[str]:
    taken: list[str] = []
    size = 0
    for line in lines[:max_lines]:
        size += len(line) + 1
        if size > max_chars and taken:
            break
        taken.append(line)
    return taken
