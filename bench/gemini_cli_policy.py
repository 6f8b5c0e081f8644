"""Gemini CLI's context management, as the replay runs it (`gemini-cli`).

Source: google-gemini/gemini-cli `packages/core/src/services/toolOutputMaskingService.ts` and
`chatCompressionService.ts` (read, not copied; bench/README.md gives the commits). Before each
request:
1. **Tool-output masking**: walking back from the newest output (the latest message spared),
   the newest 50,000 tokens of outputs are protected; the output that crosses that line and
   every older one not yet masked are *prunable*; once they hold at least 30,000 tokens they
   are all replaced by a preview (the first and last 250 characters when longer than 500)
   inside `<tool_output_masked>`, naming the file the full output went to. The thresholds are
   absolute, as in the source: below about 80k tokens of outputs nothing is masked.
2. **Chat compression** at 50 % of the budget (`DEFAULT_COMPRESSION_TOKEN_THRESHOLD`, a share
   of the model's window): the newest 30 % of the history (by characters) is kept, split at a
   user message that is not a tool output (`findCompressSplitPoint`); the part before becomes
   one `<state_snapshot>` summary (a user message) and the model's acknowledgement. With no
   such split point (a single-request session has one, at its start) nothing is compressed:
   the request goes over budget, as Gemini CLI's would. A compression that does not shrink the
   history is discarded and not tried again (`hasFailedCompressionAttempt`).
Not modelled: the summarizer's second "verification" call, and the 50,000-token budget of tool
outputs kept in the compressed history (`truncateHistoryToBudget`: it only matters once the
kept 30 % alone holds more than 50k tokens of outputs).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from bench.peer_policies import _Compacting, _lead
from bench.policies import PolicyContext, render
from forge.llm.messages import Message

COMPRESSION_AT = 0.5
"""Share of the budget at which the history is compressed."""
PRESERVE = 0.3
"""Share of the history (by characters) kept after a compression."""
PROTECT_TOKENS = 50_000
"""Newest tool-output tokens never masked."""
MINIMUM_PRUNABLE_TOKENS = 30_000
"""Masking runs only when this many output tokens are prunable."""
PREVIEW_CHARACTERS = 250
ACKNOWLEDGEMENT = "Got it. Thanks for the additional context!"
MASKED_TAG = "<tool_output_masked"


def masked_text(content: str, number: int) -> str:
    """What a masked output becomes: a head-and-tail preview and where the rest went."""
    if len(content) > 2 * PREVIEW_CHARACTERS:
        preview = (
            f"{content[:PREVIEW_CHARACTERS]}\n... [TRUNCATED] ...\n{content[-PREVIEW_CHARACTERS:]}"
        )
    else:
        preview = content
    return (
        f"{MASKED_TAG}>\n{preview}\n\nOutput too large. Full output available at: "
        f"/tmp/gemini/tool-outputs/output_{number}.txt\n</tool_output_masked>"
    )


def split_point(contents: Sequence[Message], observations: Sequence[bool]) -> int:
    """The index of the oldest message to keep (`len(contents)`: compress everything)."""
    sizes = [len(json.dumps({"role": m.role, "content": m.content})) for m in contents]
    target = sum(sizes) * (1 - PRESERVE)
    last = 0
    cumulative = 0
    for index, message in enumerate(contents):
        if message.role == "user" and not observations[index]:
            if cumulative >= target:
                return index
            last = index
        cumulative += sizes[index]
    final = contents[-1] if contents else None
    if final is not None and final.role == "assistant" and not final.tool_calls:
        return len(contents)
    return last


class GeminiCliPolicy(_Compacting):
    """Tool-output masking, then chat compression at half the budget."""

    name = "gemini-cli"

    def __init__(self, context: PolicyContext) -> None:
        super().__init__(context)
        self.failed = False

    def _mask(self, history: Sequence[Message]) -> None:
        session = self.context.session
        count = self.context.count
        protected = 0
        crossed = False
        prunable: list[int] = []
        prunable_tokens = 0
        for index in range(len(history) - 2, self.covered - 1, -1):
            if not session.is_tool_output(index) or index in self.cleared:
                continue
            tokens = count(history[index].content)
            if not crossed:
                protected += tokens
                if protected <= PROTECT_TOKENS:
                    continue
                crossed = True
            prunable.append(index)
            prunable_tokens += tokens
        if prunable_tokens < MINIMUM_PRUNABLE_TOKENS:
            return
        for index in prunable:
            text = masked_text(history[index].content, index)
            if count(text) < count(history[index].content):
                self._clear(index, history[index], text)

    async def prepare(self, history: Sequence[Message]) -> list[Message]:
        """The history masked, then compressed when it reached half the budget."""
        self._mask(history)
        request = self._build(history)
        size = self.context.measure(request)
        if self.failed or size < COMPRESSION_AT * self.context.budget:
            return request
        lead = _lead(request)
        contents = request[lead:]
        # Messages of `contents` before the history's own: the snapshot and its reply.
        summarized = len(self.base) - lead if self.covered else 0
        start = self.covered if self.covered else lead
        observations = self.context.session.observations
        is_output = [
            index >= summarized and start + index - summarized in observations
            for index in range(len(contents))
        ]
        split = split_point(contents, is_output)
        if split == 0:
            return request
        kept_from = start + max(0, split - summarized)
        while kept_from < len(history) and history[kept_from].role == "tool":
            kept_from += 1  # never keep a result without its call
        material = render(contents[:split])
        summary = await self.context.summarizer.summarize(material)
        snapshot = Message(role="user", content=f"<state_snapshot>\n{summary}\n</state_snapshot>")
        ack = Message(role="assistant", content=ACKNOWLEDGEMENT)
        base = [*history[:lead], snapshot, ack]
        previous = self.base, self.covered
        self.base, self.covered = base, kept_from
        candidate = self._build(history)
        if self.context.measure(candidate) >= size:
            self.base, self.covered = previous
            self.failed = True
            return request
        return candidate
