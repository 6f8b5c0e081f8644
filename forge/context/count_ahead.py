"""Which messages the manager hands the counter to count off the event loop: the new ones.

Before every call the manager lets a counter that `CountsAhead` count, in a worker thread,
what it has not counted yet (a huge message, a resumed session: docs/adr/0036). Handing it the
whole conversation made every call O(conversation) (a membership check per message: 8 ms at
20,000 messages, 40 x the floor of the bookkeeping benchmark); this hands it the messages
appended or replaced in place since the last call (`AppendCursor`), and everything once after
any other change. A count cut short (cancelled) is handed over whole next time.
"""

from __future__ import annotations

from forge.context.conversation import Conversation
from forge.context.strategies.deterministic import AppendCursor
from forge.llm.protocols import CountsAhead


class CountAhead:
    """The messages of one conversation not yet handed to the counter."""

    def __init__(self) -> None:
        self._cursor = AppendCursor(follow=True)

    async def count(self, counter: object, conversation: Conversation) -> None:
        """Let `counter` (if it counts ahead) count what is new since the last call."""
        if not isinstance(counter, CountsAhead):
            return
        _, fresh = self._cursor.new_messages(conversation)
        replaced = [conversation[position] for position in self._cursor.replaced]
        try:
            await counter.count_ahead([*replaced, *fresh])
        except BaseException:
            self._cursor.reset()  # not all counted: the next call hands everything over
            raise
