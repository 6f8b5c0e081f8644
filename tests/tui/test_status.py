"""The status pane: context gauge colours, session usage, and the summarization panel."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Label, ProgressBar, Static

from forge.agent.events import (
    ContextUsage,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    Trigger,
    UsageEvent,
)
from forge.llm.stream import Usage
from forge.tui.widgets.formatting import format_seconds, format_tokens
from forge.tui.widgets.status import StatusPane
from tests.tui.event_delivery import show_event


class StatusHost(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusPane(
            summarization_model="small-model", warning_threshold=0.8, critical_threshold=0.9
        )


def started(items: int = 12) -> SummarizationStarted:
    return SummarizationStarted(
        "run-1", "tool_call", Trigger.AUTO, "small-model", 110_000, 128_000, items
    )


def text_of(pane: StatusPane, selector: str) -> str:
    return str(pane.query_one(selector, Static).render())


def test_numbers_read_at_a_glance() -> None:
    assert format_tokens(950) == "950"
    assert format_tokens(42_100) == "42.1k"
    assert format_tokens(1_250_000) == "1.25M"
    assert format_seconds(3.24) == "3.2 s"
    assert format_seconds(125) == "2 min 5 s"


async def test_gauge_turns_warning_then_critical() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, ContextUsage(50_000, 100_000))
        assert not pane.gauge.has_class("-warning") and not pane.gauge.has_class("-critical")
        await show_event(pane, ContextUsage(85_000, 100_000))
        assert pane.gauge.has_class("-warning") and not pane.gauge.has_class("-critical")
        await show_event(pane, ContextUsage(95_000, 100_000))
        assert pane.gauge.has_class("-critical") and not pane.gauge.has_class("-warning")
        rendered = str(pane.gauge.render())
        assert "95%" in rendered
        assert "95.0k / 100.0k tokens" in rendered


async def test_session_usage_is_shown() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, UsageEvent(Usage(100, 20, 120), 12_300, 1_200))
        assert text_of(pane, "#usage") == "in  12.3k tokens\nout 1.2k tokens"


async def test_summarization_progress_advances_then_shows_the_result() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        panel = pane.summarization
        await show_event(pane, started())
        assert panel.has_class("-running") and not panel.has_class("-idle")
        assert "tool_call (auto)" in text_of(pane, "#summary-details")
        assert "small-model" in text_of(pane, "#summary-details")
        await show_event(pane, SummarizationProgress("run-1", "tool_call", 7, 12))
        bar = panel.query_one(ProgressBar)
        assert (bar.progress, bar.total) == (7, 12)
        assert str(panel.query_one("#summary-progress-label", Label).render()) == (
            "Summarizing 7/12"
        )
        await show_event(
            pane,
            SummarizationCompleted(
                "run-1", "tool_call", "small-model", 12, 42_100, 18_300, 3.2, 12
            ),
        )
        assert panel.has_class("-done") and not panel.has_class("-running")
        assert text_of(pane, "#summary-result") == "42.1k → 18.3k tokens, 3.2 s"
        assert len(pane.recent_compactions) == 1


async def test_progress_from_another_run_is_ignored() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        await show_event(pane, SummarizationProgress("other-run", "threshold", 5, 6))
        assert pane.summarization.done == 0


async def test_failure_says_in_plain_words_what_happened_and_what_happens_next() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        await show_event(
            pane,
            SummarizationFailed(
                "run-1",
                "tool_call",
                "small-model",
                "ServerError: HTTP 500",
                "2 tool outputs pruned",
            ),
        )
        panel = pane.summarization
        assert panel.has_class("-failed") and not panel.has_class("-running")
        text = text_of(pane, "#summary-result")
        assert text.startswith("Summarization failed: model small-model answered HTTP 500")
        assert "Older content was shortened instead (2 tool outputs pruned" in text
        assert "ServerError" not in text


async def test_an_interrupted_run_never_stays_running() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        await show_event(pane, SummarizationProgress("run-1", "tool_call", 3, 12))
        pane.summarization.interrupted()
        assert pane.summarization.state == "failed"
        assert text_of(pane, "#summary-result") == "interrupted at 3/12"
        assert not pane.summarization.has_class("-running")


async def test_a_skipped_run_is_neutral_not_a_failure() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        await show_event(
            pane,
            SummarizationFailed(
                "run-1",
                "threshold",
                "small-model",
                "skipped: nothing old enough to summarize",
                None,
            ),
        )
        panel = pane.summarization
        assert panel.state == "skipped" and panel.has_class("-skipped")
        assert not panel.has_class("-failed") and not panel.has_class("-running")
        result = text_of(pane, "#summary-result")
        assert result == "Nothing to compact yet\n(nothing old enough to summarize)"


async def test_a_new_session_idles_the_panel_and_forgets_compactions() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        await show_event(
            pane,
            SummarizationCompleted("run-1", "tool_call", "small-model", 12, 9_000, 4_000, 1.0, 3),
        )
        await show_event(pane, UsageEvent(Usage(10, 2, 12), 500, 40))
        pane.reset_session()
        assert pane.summarization.state == "idle"
        assert text_of(pane, "#summary-result") == "idle"
        assert "strategy" not in text_of(pane, "#summary-details")
        assert list(pane.recent_compactions) == []
        assert "in  0 tokens" in text_of(pane, "#usage")


async def test_a_skip_whose_fallback_shortened_the_context_says_so_not_nothing_to_compact() -> None:
    app = StatusHost()
    async with app.run_test(size=(120, 40)):
        pane = app.query_one(StatusPane)
        await show_event(pane, started())
        skipped = SummarizationFailed(
            "run-1",
            "threshold",
            "small-model",
            "skipped: nothing old enough to summarize",
            "tool outputs masked",
            0,
            90_000,
            60_000,
        )
        await show_event(pane, skipped)
        assert pane.summarization.state == "done"
        result = text_of(pane, "#summary-result")
        assert "Nothing to compact yet" not in result
        assert result.startswith("Nothing to summarize") and "tool outputs masked" in result
        assert "90.0k → 60.0k tokens" in result
