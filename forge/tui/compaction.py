"""How a summarization run, or a whole /compact, ended — in words for the chat and status pane.

The context manager reports a run that found nothing worth summarizing as a
`SummarizationFailed` whose error starts with "skipped:" (`forge.context.manager`). That is a
neutral outcome ("Nothing to compact yet"), not a failure, and is shown as such everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from forge.agent.events import SummarizationCompleted, SummarizationFailed
from forge.tui.widgets.chat_blocks import NoticeBlock
from forge.tui.widgets.formatting import format_seconds, format_tokens

SKIPPED_PREFIX = "skipped:"
"""How the context manager starts the error of a run it skipped."""
NOTHING_TO_COMPACT = "Nothing to compact yet"

FinishedRun = SummarizationCompleted | SummarizationFailed


def is_skip(event: SummarizationFailed) -> bool:
    """True when the run was skipped (nothing old enough, or no saving), not failed."""
    return event.error.startswith(SKIPPED_PREFIX)


def skip_reason(event: SummarizationFailed) -> str:
    """Why the run was skipped, e.g. "nothing old enough to summarize"."""
    return event.error.removeprefix(SKIPPED_PREFIX).strip()


_WHAT_WENT_WRONG = {
    "ModelNotFoundError": "answered {status}: it does not know this model",
    "AuthenticationError": "refused the API key ({status})",
    "QuotaExhaustedError": "is out of quota",
    "RateLimitError": "kept answering {status}: rate-limited",
    "ServerError": "answered {status}: a server error",
    "TransportError": "could not be reached",
    "ContextOverflowError": "could not take that much text at once",
    "BadRequestError": "refused the request ({status})",
}
_FIXES = {
    "ModelNotFoundError": "Fix: /settings → Summarization Model.",
    "AuthenticationError": "Fix: check the API key in /settings.",
    "BadRequestError": "Fix: /settings → Summarization Model.",
}


def plain_failure(event: SummarizationFailed, *, markdown: bool = True) -> str:
    """A failed summarization run in plain words: which model, what it answered, what
    happens instead and, when the user can fix it, where. (The error text of the event,
    "ModelNotFoundError: Model or endpoint not found (HTTP 404 …)", is for the log.)
    `markdown=False` leaves the model name unquoted, for plain-text widgets."""
    kind, _, detail = event.error.partition(": ")
    status_match = re.search(r"\b(?:HTTP )?([45]\d\d)\b", event.error)
    status = f"HTTP {status_match.group(1)}" if status_match else "an error"
    what = _WHAT_WENT_WRONG.get(kind)
    model = event.model or "the summarization model"
    if what is None:
        said = detail or event.error
        what = f"gave no usable summary ({said.rstrip('.')})"
    name = f"`{model}`" if markdown else model
    text = f"Summarization failed: model {name} {what.format(status=status)}."
    if event.items_applied:
        text += f" {event.items_applied} part(s) were summarized before it failed."
    if event.fallback:
        change = tokens_change(event.tokens_before, event.tokens_after)
        text += f" Older content was shortened instead ({event.fallback}; {change})."
    else:
        text += " Nothing was shortened; it is tried again when the context fills up."
    if fix := _FIXES.get(kind):
        text += f" {fix}"
    return text


def tokens_change(before: int, after: int) -> str:
    """ "42.1k → 18.3k tokens"."""
    return f"{format_tokens(before)} → {format_tokens(after)} tokens"


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """The closing line of a /compact: its markdown and the notice kind ("info" or "error")."""

    text: str
    kind: str = "info"


def _failure_text(event: SummarizationFailed) -> str:
    if event.fallback:
        change = tokens_change(event.tokens_before, event.tokens_after)
        return f"fallback applied: {event.fallback} ({change})"
    return "nothing was changed"


def describe_compaction(
    runs: list[FinishedRun], *, reason: str, error: str = ""
) -> CompactionOutcome:
    """The outcome of one /compact from the runs it finished and how its worker ended.

    `reason` and `error` are those of `TurnEnded` (an `ErrorEvent` counts as `error` too).
    """
    completed = [run for run in runs if isinstance(run, SummarizationCompleted)]
    failed = [run for run in runs if isinstance(run, SummarizationFailed) and not is_skip(run)]
    skipped = [run for run in runs if isinstance(run, SummarizationFailed) and is_skip(run)]
    if reason == "cancelled":
        if not completed:
            return CompactionOutcome("Compaction interrupted; the conversation is unchanged.")
        change = tokens_change(completed[0].tokens_before, completed[-1].tokens_after)
        return CompactionOutcome(f"Compaction interrupted after compacting {change}.")
    if completed:
        first, last = completed[0], completed[-1]
        seconds = format_seconds(sum(run.duration_s for run in completed))
        text = f"Compacted: {tokens_change(first.tokens_before, last.tokens_after)}, {seconds}."
        if failed:
            text += f" One run failed. {plain_failure(failed[-1])}"
        return CompactionOutcome(text)
    if failed:
        return CompactionOutcome(f"Compaction failed. {plain_failure(failed[-1])}", kind="error")
    if error:
        return CompactionOutcome(f"Compaction failed: {error} — nothing was changed.", kind="error")
    if skipped:
        last_skip = skipped[-1]
        if last_skip.fallback:
            return CompactionOutcome(
                f"Nothing to summarize ({skip_reason(last_skip)}); {_failure_text(last_skip)}."
            )
        return CompactionOutcome(f"{NOTHING_TO_COMPACT}: {skip_reason(last_skip)}.")
    return CompactionOutcome(f"{NOTHING_TO_COMPACT}.")


@dataclass
class CompactionTracker:
    """Follows one /compact: the chat line that announced it and what its runs did (the
    chat's handlers add the finished runs and the errors as they arrive)."""

    notice: NoticeBlock
    instructions: str = ""
    runs: list[FinishedRun] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def close(self, reason: str, error: str = "") -> CompactionOutcome:
        """Turn the announcing line into the outcome line; returns the outcome."""
        outcome = describe_compaction(
            self.runs, reason=reason, error=error or "; ".join(self.errors)
        )
        if self.instructions:
            outcome = CompactionOutcome(
                f"{outcome.text} Instructions: {self.instructions}", outcome.kind
            )
        await self.notice.set_text(outcome.text, kind=outcome.kind)
        return outcome
