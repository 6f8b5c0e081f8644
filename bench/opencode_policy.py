"""opencode's context management, as the replay runs it (`opencode`): prune, then compaction.

Source: sst/opencode `packages/opencode/src/session/compaction.ts` and `overflow.ts` (read, not
copied; bench/README.md gives the commit).
1. **Prune**, when a turn ends (here: when the next user request arrives): walking back from
   the newest output, the outputs of the last two user turns are never touched; past them, the
   newest 40,000 tokens of outputs are kept (`PRUNE_PROTECT`), and every older output is
   cleared (`[Old tool result content cleared]`) — only if that frees more than 20,000 tokens
   (`PRUNE_MINIMUM`). The walk stops at the last summary or at an output already cleared.
   A session with a single request never prunes. (The newest source runs prune only when
   `compaction.prune` is set; earlier releases ran it by default, which is modelled.)
2. **Compaction** when the prompt reaches the usable context (`isOverflow`: the window less
   the output reserve and a 20,000-token buffer; the replay's budget stands for that usable
   size): everything but a recent tail becomes one summary; the tail is the newest messages
   within a quarter of the usable size, at least 2,000 and at most 15,000 tokens
   (`preserveRecentBudget`, whole turns first, then a turn split at a message). Tool outputs in
   the summary's material are cut to 2,000 characters (`TOOL_OUTPUT_MAX_CHARS`); the previous
   summary is part of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.peer_policies import _Compacting, _lead, _tail_start
from bench.policies import PolicyContext
from forge.llm.messages import Message

PRUNE_PROTECT = 40_000
PRUNE_MINIMUM = 20_000
PROTECTED_TURNS = 2
CLEARED = "[Old tool result content cleared]"
TOOL_OUTPUT_MAX_CHARS = 2_000
TAIL_SHARE = 0.25
TAIL_MINIMUM = 2_000
TAIL_MAXIMUM = 15_000
SUMMARY_HEADING = "What did we do so far?"


class OpenCodePolicy(_Compacting):
    """Prune at the end of each turn; compact at the usable context."""

    name = "opencode"

    def __init__(self, context: PolicyContext) -> None:
        super().__init__(context)
        self._seen_users: set[int] = set()

    def _prune(self, history: Sequence[Message], end: int) -> None:
        """Prune the history before index `end` (the turn that just ended is in it)."""
        session = self.context.session
        users = [i for i in session.user_messages() if self.covered <= i < end]
        if len(users) < PROTECTED_TURNS:
            return
        boundary = users[-PROTECTED_TURNS]
        total = pruned = 0
        chosen: list[int] = []
        for index in range(boundary - 1, self.covered - 1, -1):
            if not session.is_tool_output(index):
                continue
            if index in self.cleared:
                break
            tokens = self.context.count(history[index].content)
            total += tokens
            if total <= PRUNE_PROTECT:
                continue
            pruned += tokens
            chosen.append(index)
        if pruned > PRUNE_MINIMUM:
            for index in chosen:
                self._clear(index, history[index], CLEARED)

    def _material(self, messages: Sequence[Message]) -> str:
        blocks = [f"Previous summary:\n{self.summary}"] if self.summary else []
        for message in messages:
            content = message.content
            if message.role == "tool" and len(content) > TOOL_OUTPUT_MAX_CHARS:
                content = f"{content[:TOOL_OUTPUT_MAX_CHARS]}\n[truncated]"
            text = f"{message.role}: {content}"
            for call in message.tool_calls:
                text += f"\n[call {call.name} {call.arguments}]"
            blocks.append(text)
        return "\n\n".join(blocks)

    def _tail(self, history: Sequence[Message]) -> int:
        """The first history index of the tail kept after a compaction."""
        budget = min(TAIL_MAXIMUM, max(TAIL_MINIMUM, int(self.context.budget * TAIL_SHARE)))
        start = len(history)
        size = 0
        while start > self.covered:
            candidate = start - 1
            message = self.cleared.get(candidate, history[candidate])
            size += self.context.count(message.content) + sum(
                self.context.count(call.arguments) for call in message.tool_calls
            )
            if size > budget:
                break
            start = candidate
        return _tail_start(history, start) if start < len(history) else start

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history pruned at each new request, compacted at the usable context."""
        users = self.context.session.user_messages()
        arrived = [i for i in users if i < len(history) and i not in self._seen_users]
        for index in arrived:
            self._seen_users.add(index)
            if index == users[0]:
                continue
            self._prune(history, index)
        request = self._build(history)
        if self.context.measure(request) < self.context.budget or self.covered >= len(history):
            return request
        lead = _lead(history)
        tail = max(self._tail(history), self.covered, lead)
        if tail <= max(self.covered, lead):
            tail = len(history)  # nothing fits beside the summary: summarize it all
        folded = [self.cleared.get(i, history[i]) for i in range(max(self.covered, lead), tail)]
        self.summary = await self.context.summarizer.summarize(self._material(folded))
        question = Message(role="user", content=SUMMARY_HEADING)
        answer = Message(role="assistant", content=self.summary)
        self.base = [*history[:lead], question, answer]
        self.covered = tail
        return self._build(history)
