"""Typed errors of context management. Each says what went wrong in words a user can read."""

from __future__ import annotations


class SummarizationError(Exception):
    """A summary could not be produced (the LLM errors have their own types in forge.llm)."""


class EmptySummaryError(SummarizationError):
    """The summarization model answered with no text; an empty summary is never applied."""


class SummarizationSkipped(SummarizationError):
    """A run was not applied because it would not reduce tokens (or had nothing to do)."""


class PartialSummarizationError(SummarizationError):
    """Some items of a run failed. The successful ones were applied; the failed ones are left
    verbatim. `first_error` is the first failure in conversation order."""

    def __init__(self, applied: int, failed: int, first_error: BaseException) -> None:
        super().__init__(f"{failed} of {applied + failed} summaries failed: {first_error}")
        self.applied = applied
        self.failed = failed
        self.first_error = first_error
