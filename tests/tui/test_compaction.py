"""The words for how a /compact ended: done with tokens before → after, a neutral skip, a
failure with or without a fallback, an interruption."""

from __future__ import annotations

from forge.agent.events import SummarizationCompleted, SummarizationFailed
from forge.tui.compaction import (
    NOTHING_TO_COMPACT,
    describe_compaction,
    is_skip,
    plain_failure,
    skip_reason,
)


def completed(before: int = 42_100, after: int = 18_300) -> SummarizationCompleted:
    return SummarizationCompleted("r1", "threshold", "small", 3, before, after, 3.2, 3)


def failed(error: str, fallback: str | None = None) -> SummarizationFailed:
    after = 30_000 if fallback else 42_100
    return SummarizationFailed("r1", "threshold", "small", error, fallback, 0, 42_100, after)


def test_a_skip_is_recognised_with_its_reason() -> None:
    skip = failed("skipped: nothing old enough to summarize")
    assert is_skip(skip) and skip_reason(skip) == "nothing old enough to summarize"
    assert not is_skip(failed("ServerError: HTTP 500"))


def test_done_reports_tokens_before_and_after() -> None:
    outcome = describe_compaction([completed()], reason="completed")
    assert outcome.text == "Compacted: 42.1k → 18.3k tokens, 3.2 s."
    assert outcome.kind == "info"


def test_a_skip_is_neutral() -> None:
    outcome = describe_compaction(
        [failed("skipped: nothing old enough to summarize")], reason="completed"
    )
    assert outcome.text == f"{NOTHING_TO_COMPACT}: nothing old enough to summarize."
    assert outcome.kind == "info"


def test_a_skip_after_which_the_fallback_made_room_says_what_it_did() -> None:
    skip = failed("skipped: nothing old enough to summarize", "2 tool outputs pruned")
    outcome = describe_compaction([skip], reason="completed")
    assert outcome.kind == "info"
    assert "2 tool outputs pruned (42.1k → 30.0k tokens)" in outcome.text


def test_a_failure_says_in_plain_words_what_happened_and_what_happens_next() -> None:
    outcome = describe_compaction(
        [failed("ServerError: Server error (HTTP 500)", "3 tool outputs pruned")],
        reason="completed",
    )
    assert outcome.kind == "error"
    assert outcome.text == (
        "Compaction failed. Summarization failed: model `small` answered HTTP 500: a "
        "server error. Older content was shortened instead (3 tool outputs pruned; "
        "42.1k → 30.0k tokens)."
    )
    without = describe_compaction([failed("ServerError: HTTP 500")], reason="completed")
    assert without.text.endswith(
        "Nothing was shortened; it is tried again when the context fills up."
    )
    assert "ServerError" not in without.text and "fallback" not in without.text


def test_an_unknown_summarization_model_points_at_its_setting() -> None:
    text = plain_failure(
        SummarizationFailed(
            "r",
            "tool_call",
            "cheap-m",
            "ModelNotFoundError: Model or endpoint not found (HTTP 404: no such model)",
            "4 tool outputs pruned",
            0,
            1000,
            600,
        )
    )
    assert text.startswith("Summarization failed: model `cheap-m` answered HTTP 404")
    assert "Older content was shortened instead" in text
    assert text.endswith("Fix: /settings → Summarization Model.")
    assert "ModelNotFoundError" not in text


def test_an_error_without_any_run_is_a_failure() -> None:
    outcome = describe_compaction([], reason="error", error="manager exploded")
    assert outcome.kind == "error" and "manager exploded" in outcome.text


def test_an_interruption_says_whether_anything_changed() -> None:
    assert "unchanged" in describe_compaction([], reason="cancelled").text
    after_one = describe_compaction([completed()], reason="cancelled").text
    assert after_one == "Compaction interrupted after compacting 42.1k → 18.3k tokens."


def test_no_run_at_all_is_nothing_to_compact() -> None:
    assert describe_compaction([], reason="completed").text == f"{NOTHING_TO_COMPACT}."
