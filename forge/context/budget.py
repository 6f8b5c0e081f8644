"""The token budget: how large the prompt may be, how large it is now, and when to act.

Usage is the last prompt size the server reported plus the local count of what changed since
(`UsageTracker`), so the gauge is exact wherever the server reports usage. Thresholds compare
with `reached`, which treats the fraction exactly (no float rounding at the boundary).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
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
    exact = Fraction(str(fraction))
    return Fraction(current_tokens, max_tokens) >= exact


@dataclass(slots=True)
class _Report:
    conversation_id: int
    prompt_tokens: int
    local_tokens: int


class UsageTracker:
    """Current prompt tokens = last reported prompt tokens + (local count now - local count of
    the messages that prompt was made from). Appends add their count; summaries subtract what
    they freed; with no report yet, the local count alone."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._report: _Report | None = None
        self._sent: tuple[int, int, int] | None = None  # (conversation id, version, local tokens)

    def local_tokens(self, conversation: Conversation) -> int:
        """The local count of the whole conversation."""
        return self.counter.count_messages(conversation.messages)

    def mark_sent(self, conversation: Conversation) -> None:
        """Remember the conversation as it is about to be sent (before the reply is appended)."""
        self._sent = (id(conversation), conversation.version, self.local_tokens(conversation))

    def record(self, prompt_tokens: int, conversation: Conversation) -> None:
        """The server reported `prompt_tokens` for the request last sent from `conversation`."""
        if self._sent is not None and self._sent[0] == id(conversation):
            local = self._sent[2]
        else:
            local = self.local_tokens(conversation)
        self._report = _Report(id(conversation), prompt_tokens, local)

    def current(self, conversation: Conversation) -> int:
        """Prompt tokens now (never negative)."""
        local = self.local_tokens(conversation)
        report = self._report
        if report is None or report.conversation_id != id(conversation):
            return local
        return max(0, report.prompt_tokens + local - report.local_tokens)

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
