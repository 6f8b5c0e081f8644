"""Token counts by position with O(log n) updates and prefix sums (a Fenwick tree).

Masking asks, before every LLM call, how many tokens follow its oldest candidate (the part of
the prompt a rewrite there would un-cache, `forge.context.cache_pricing`). Summing them afresh
would cost O(conversation); this keeps each position's count and answers in O(log n), with an
append or an in-place replacement costing O(log n) too.
"""

from __future__ import annotations


class PrefixSums:
    """Integers by position 0..n-1: append, set one, sum of the first k."""

    def __init__(self) -> None:
        self._values: list[int] = []
        self._tree: list[int] = [0]
        """1-based Fenwick tree over `_values`."""

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        """Forget every position."""
        self._values.clear()
        self._tree = [0]

    def append(self, value: int) -> None:
        """Add a position at the end holding `value`."""
        self._values.append(0)
        index = len(self._values)
        # The new node covers (index - lowbit(index), index]: sum the nodes it covers.
        covered, child, low = 0, index - 1, index & -index
        while child > index - low:
            covered += self._tree[child]
            child -= child & -child
        self._tree.append(covered)
        self.set(index - 1, value)

    def set(self, position: int, value: int) -> None:
        """The value at `position` becomes `value`."""
        delta = value - self._values[position]
        if not delta:
            return
        self._values[position] = value
        index = position + 1
        while index < len(self._tree):
            self._tree[index] += delta
            index += index & -index

    def prefix(self, count: int) -> int:
        """Sum of the first `count` values."""
        total, index = 0, min(count, len(self._values))
        while index > 0:
            total += self._tree[index]
            index -= index & -index
        return total

    def total(self) -> int:
        """Sum of every value."""
        return self.prefix(len(self._values))
