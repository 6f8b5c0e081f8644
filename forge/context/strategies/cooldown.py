"""Which items a strategy should not try again yet, so a failing or useless summary cannot turn
into a loop of identical requests before every LLM call.

An item (a tool-call group, a batch of turns) is keyed by the id of its first message. After a
failed summary it waits until the conversation has grown by a set number of messages (a
transient error gets another chance later, a dead summarization model costs one attempt per
stretch of work, not one per step). An item whose summary would not have reduced tokens is
never tried again: the same input would give the same useless answer.
"""

from __future__ import annotations

from collections.abc import Collection


class Cooldown:
    """Remembers items that failed (until the conversation grows) or did not help (for good)."""

    def __init__(self) -> None:
        self._retry_at: dict[str, int | None] = {}
        """Item key -> conversation length at which it may be tried again (None: never)."""

    def failed(self, key: str, length: int, wait_messages: int) -> None:
        """The item failed when the conversation had `length` messages; wait `wait_messages`."""
        self._retry_at[key] = length + wait_messages

    def unhelpful(self, key: str) -> None:
        """The item's summary would not reduce tokens; never try it again."""
        self._retry_at[key] = None

    def given_up(self, key: str) -> bool:
        """True when the item was found not to help: it is never tried again."""
        return key in self._retry_at and self._retry_at[key] is None

    def waiting(self, key: str, length: int) -> bool:
        """True while the item must not be tried, in a conversation of `length` messages."""
        if key not in self._retry_at:
            return False
        retry_at = self._retry_at[key]
        return retry_at is None or length < retry_at

    def remembered(self) -> list[str]:
        """The keys of every item remembered (waiting or not)."""
        return list(self._retry_at)

    def forget_missing(self, present: Collection[str]) -> None:
        """Drop items that are no longer in the conversation (summarized or pruned since)."""
        for key in [key for key in self._retry_at if key not in present]:
            del self._retry_at[key]
