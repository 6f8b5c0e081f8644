"""The token budget: how large the prompt may be, how large it is now, and when to act.

Usage combines the last prompt size the server reported with Forge's local count
(`UsageTracker`): exact wherever the server reports usage and nothing shrank since, never
below the local count after a compaction (see ADR 0024). The local count includes the tool
definitions and is kept incrementally (`forge.context.tally`). Thresholds compare with
`reached`, which treats the fraction exactly (no float rounding at the boundary).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.tally import Tallies
from forge.llm.model_info import default_reply_headroom
from forge.llm.protocols import TokenCounter

MINIMUM_FREED_SHARE = 0.05
"""An automatic compaction that frees less than this share of the prompt pauses automatic
compaction (no loops of summaries that do not help)."""


def prompt_budget(settings: ContextSettings, context_window: int) -> int:
    """`settings.max_tokens`, else the window minus the reply headroom."""
    if settings.max_tokens is not None:
        return settings.max_tokens
    return context_window - default_reply_headroom(context_window)


def reached(current_tokens: int, max_tokens: int, fraction: float) -> bool:
    """True when current / max >= fraction, compared exactly (0.8 of 1000 is 800, not 800.0…1)."""
    if max_tokens <= 0:
        return True
    numerator, denominator = _exact(fraction)
    return current_tokens * denominator >= numerator * max_tokens


@lru_cache(maxsize=64)
def _exact(fraction: float) -> tuple[int, int]:
    """The fraction as written (0.8 is 4/5, not the float's binary value), as integers."""
    exact = Fraction(str(fraction))
    return exact.numerator, exact.denominator


@dataclass(slots=True)
class _Snapshot:
    """A conversation as sent, or as the server measured it."""

    conversation_id: int
    local_tokens: int
    """The local count then, tool definitions included."""
    replacements: int
    """The conversation's replacement count then (see `ConversationTally.replacements`)."""
    prompt_tokens: int = 0
    """What the server reported for it (0 while unreported)."""


class UsageTracker:
    """Prompt tokens now, from the last server report and the local count:

    - no usable report (none yet, another conversation, or a reported 0): the local count;
    - only appends since the report: reported + (local now - local then), exact for the sent
      part and the local estimate for what was added — never below the local count;
    - something was replaced since (a summary, a mask, a prune): the local count now scaled by
      the report's ratio (reported / local then), and never below the local count. Adding the
      local difference instead would collapse toward 0 when the server's tokenizer counts
      fewer tokens than Forge's (the status pane once read "51.6k → 0 tokens").

    Both cases are floored at the local count, so a server that counts fewer tokens than Forge
    never makes a compaction look like it added tokens ("4.8k → 5.0k"): before and after are
    then both Forge's own count.

    The local count is the messages (kept incrementally by `tallies`) plus `tool_tokens`, the
    tool definitions sent with every request."""

    def __init__(self, counter: TokenCounter, tallies: Tallies | None = None) -> None:
        self.counter = counter
        self.tallies = tallies if tallies is not None else Tallies(counter)
        self._tool_tokens = 0
        self._count_tools: Callable[[], int] | None = None
        self._report: _Snapshot | None = None
        self._sent: _Snapshot | None = None

    @property
    def tool_tokens(self) -> int:
        """Tokens of the tool definitions sent with every request (see `Manager.set_tools`),
        counted the first time they are needed (docs/adr/0042)."""
        if self._count_tools is not None:
            self._tool_tokens, self._count_tools = int(self._count_tools()), None
        return self._tool_tokens

    def count_tools_later(self, count: Callable[[], int]) -> None:
        """The tool definitions changed: `count()` gives their tokens when next needed (the
        tokenizer may still be loading when they are set)."""
        self._count_tools = count

    def local_tokens(self, conversation: Conversation) -> int:
        """The local count of the conversation's messages (without the tool definitions)."""
        return self.tallies.of(conversation).tokens

    def _snapshot(self, conversation: Conversation) -> _Snapshot:
        tally = self.tallies.of(conversation)
        return _Snapshot(id(conversation), tally.tokens + self.tool_tokens, tally.replacements)

    def mark_sent(self, conversation: Conversation) -> None:
        """Remember the conversation as it is about to be sent (before the reply is appended)."""
        self._sent = self._snapshot(conversation)

    def record(self, prompt_tokens: int | None, conversation: Conversation) -> None:
        """The server reported `prompt_tokens` for the request last sent from `conversation`.
        A missing or non-positive figure is no report: Forge stays on its own count."""
        if not prompt_tokens or prompt_tokens <= 0:
            self._report = None
            return
        sent = self._sent
        if sent is None or sent.conversation_id != id(conversation):
            sent = self._snapshot(conversation)
        self._report = _Snapshot(
            sent.conversation_id, sent.local_tokens, sent.replacements, prompt_tokens
        )

    def current(self, conversation: Conversation) -> int:
        """Prompt tokens now (see the class docstring)."""
        tally = self.tallies.of(conversation)
        local = tally.tokens + self.tool_tokens
        report = self._report
        if report is None or report.conversation_id != id(conversation):
            return local
        if tally.replacements == report.replacements:
            return max(local, report.prompt_tokens + local - report.local_tokens)
        if report.local_tokens <= 0:
            return local
        return max(local, round(local * report.prompt_tokens / report.local_tokens))

    def forget(self) -> None:
        """Drop the last report (e.g. after switching provider or model)."""
        self._report = None
        self._sent = None


class WarningLatch:
    """Fires once each time usage crosses the warning threshold upward."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._above = False

    def crossed(self, current_tokens: int, max_tokens: int) -> bool:
        """True exactly when usage is at/above the threshold and was below it last time."""
        above = reached(current_tokens, max_tokens, self.threshold)
        fired = above and not self._above
        self._above = above
        return fired

    def update(self, current_tokens: int, max_tokens: int) -> None:
        """Re-arm when usage fell below the threshold (without firing)."""
        if not reached(current_tokens, max_tokens, self.threshold):
            self._above = False


class CompactionGovernor:
    """Stops automatic compaction that does not help.

    After an automatic run frees less than `MINIMUM_FREED_SHARE` of the prompt, automatic
    compaction pauses until the prompt grows by that share of the budget beyond where it
    paused, or falls below `resume_below` of the budget.
    """

    def __init__(self, resume_below: float) -> None:
        self.resume_below = resume_below
        self.paused_at: int | None = None

    def allows(self, current_tokens: int, max_tokens: int) -> bool:
        """Whether an automatic compaction may run now (resuming if the pause is over)."""
        if self.paused_at is None:
            return True
        grown = current_tokens - self.paused_at >= MINIMUM_FREED_SHARE * max_tokens
        if grown or not reached(current_tokens, max_tokens, self.resume_below):
            self.paused_at = None
            return True
        return False

    def record_run(self, tokens_before: int, tokens_after: int) -> bool:
        """Note an automatic run; returns True if it freed too little and compaction paused."""
        freed = tokens_before - tokens_after
        if freed < MINIMUM_FREED_SHARE * tokens_before:
            self.paused_at = tokens_after
            return True
        self.paused_at = None
        return False
