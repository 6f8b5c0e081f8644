"""The summarization panel: what is being summarized, by which model, how far it got, and how
it ended. Every run ends in a result, a neutral "nothing to compact" or an error; an
interrupted run says so, never spins."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Label, ProgressBar, Static

from forge.agent.events import (
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
)
from forge.text_safety import terminal_safe
from forge.tui.compaction import (
    NOTHING_TO_COMPACT,
    is_skip,
    plain_failure,
    skip_reason,
    tokens_change,
)
from forge.tui.messages import (
    SummarizationCompletedShown,
    SummarizationFailedShown,
    SummarizationProgressShown,
    SummarizationStartedShown,
    SummarizerDisabledShown,
    TurnOver,
    TurnStarted,
)
from forge.tui.widgets.formatting import format_seconds, format_tokens

STATES = ("idle", "running", "done", "skipped", "failed")


def progress_label(done: int, total: int) -> str:
    """The text beside the bar: "Summarizing 7/12"."""
    return f"Summarizing {done}/{total}"


def result_label(event: SummarizationCompleted) -> str:
    """The outcome line: "42.1k → 18.3k tokens, 3.2 s"."""
    before, after = format_tokens(event.tokens_before), format_tokens(event.tokens_after)
    return f"{before} → {after} tokens, {format_seconds(event.duration_s)}"


class SummarizationPanel(Vertical):
    """Live state of the latest summarization run; state is a dash-class (`-running`, ...)."""

    DEFAULT_CSS = """
    SummarizationPanel {
        height: auto;
        ProgressBar { display: none; }
        &.-running ProgressBar { display: block; }
        #summary-progress-label { display: none; }
        &.-running #summary-progress-label { display: block; }
        ProgressBar Bar { width: 1fr; }
        &.-failed #summary-result { color: $text-error; }
        &.-off #summary-result { color: $text-error; }
        &.-done #summary-result { color: $text-success; }
        &.-skipped #summary-result { color: $text-muted; }
    }
    """

    DEFAULT_CLASSES = "-idle"

    state: var[str] = var("idle")

    def __init__(self, summarization_model: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summarization_model = summarization_model
        self.run_id = ""
        self.strategy = ""
        self.done = 0
        self.total = 0
        self.result_text = ""
        self._before_run: tuple[str, str, str] = ("idle", "", "idle")
        """State, strategy line and result shown before the latest run (a skip is undone to
        it when the conversation moves on)."""

    def compose(self) -> ComposeResult:
        yield Label("Summarization", classes="pane-title")
        yield Static(self._details(), id="summary-details", markup=False)
        yield ProgressBar(total=1, show_eta=False, show_percentage=False, id="summary-progress")
        yield Label("", id="summary-progress-label", markup=False)
        yield Static("idle", id="summary-result", markup=False)

    def watch_state(self, old: str, new: str) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")

    def _details(self) -> str:
        # Short lines: the pane is 20 columns wide on an 80-column terminal.
        model = terminal_safe(self.summarization_model)
        return f"{self.strategy}\nmodel {model}" if self.strategy else f"model {model}"

    def _refresh_details(self) -> None:
        if self.is_mounted:
            self.query_one("#summary-details", Static).update(self._details())

    def _show_result(self, text: str) -> None:
        # Failures quote the server's error message.
        self.result_text = text = terminal_safe(text)
        self.query_one("#summary-result", Static).update(text)

    def _show_progress(self) -> None:
        total = max(self.total, 1)
        self.query_one(ProgressBar).update(total=total, progress=min(self.done, total))
        label = progress_label(self.done, self.total)
        self.query_one("#summary-progress-label", Label).update(label)

    def set_model(self, summarization_model: str) -> None:
        """The model summaries use from now on (shown while idle and for the next run)."""
        if self.state != "running":
            self.summarization_model = summarization_model
            self._refresh_details()

    def started(self, event: SummarizationStarted) -> None:
        """A run began: show strategy, trigger, model and an empty bar."""
        if self.state not in ("running", "skipped"):
            self._before_run = (self.state, self.strategy, self.result_text or "idle")
        self.run_id = event.run_id
        self.strategy = f"{event.strategy} ({event.trigger.value})"
        self.summarization_model = event.model
        self.done, self.total = 0, event.items
        self.state = "running"
        self._refresh_details()
        self._show_progress()
        self._show_result(f"{format_tokens(event.current_tokens)} tokens in context")

    def progress(self, event: SummarizationProgress) -> None:
        """One more item finished: advance the bar."""
        if event.run_id != self.run_id or self.state != "running":
            return
        self.done, self.total = event.done, event.total
        self._show_progress()

    def completed(self, event: SummarizationCompleted) -> None:
        """The run finished: show before → after tokens and the time taken."""
        self.run_id = event.run_id
        self.state = "done"
        self.done = self.total = event.items
        self._show_result(result_label(event))

    def failed(self, event: SummarizationFailed) -> None:
        """The run failed: show the error and the fallback that was applied. A skipped run
        (nothing worth summarizing) is neutral: "Nothing to compact yet" and why."""
        self.run_id = event.run_id
        if is_skip(event):
            if event.fallback:  # nothing to summarize, but the context was shortened
                self.state = "done"
                change = tokens_change(event.tokens_before, event.tokens_after)
                self._show_result(
                    f"Nothing to summarize\n({skip_reason(event)})\n"
                    f"shortened instead: {event.fallback}\n{change}"
                )
                return
            self.state = "skipped"
            self._show_result(f"{NOTHING_TO_COMPACT}\n({skip_reason(event)})")
            return
        self.state = "failed"
        self._show_result(plain_failure(event, markdown=False))

    def summaries_off(self, event: SummarizerDisabled) -> None:
        """LLM summaries are off for the session: show the notice (model and fix)."""
        self.state = "off"
        self._show_result(event.text)

    def summaries_back_on(self) -> None:
        """A settings change re-armed the summarizer: the "Summaries are off" notice goes."""
        if self.state == "off":
            self.reset()

    def reset(self) -> None:
        """Back to idle with nothing shown (a new session started)."""
        self._before_run = ("idle", "", "idle")
        self.run_id = self.strategy = ""
        self.done = self.total = 0
        self.state = "idle"
        self._refresh_details()
        self._show_result("idle")

    def conversation_moved_on(self) -> None:
        """A new turn started: a skip's "nothing to compact" may no longer be true, so the
        panel goes back to what it showed before that run (the last outcome, or idle)."""
        if self.state != "skipped":
            return
        self.state, self.strategy, text = self._before_run
        self._refresh_details()
        self._show_result(text)

    def interrupted(self) -> None:
        """The turn ended while a run was in progress: say so instead of spinning forever."""
        if self.state == "running":
            self.state = "failed"
            self._show_result(f"interrupted at {self.done}/{self.total}")

    # --- the events it shows (posted by `forge.tui.event_dispatch`) --------------------------
    @on(SummarizationStartedShown)
    def _began(self, message: SummarizationStartedShown) -> None:
        self.started(message.event)

    @on(SummarizationProgressShown)
    def _advanced(self, message: SummarizationProgressShown) -> None:
        self.progress(message.event)

    @on(SummarizationCompletedShown)
    def _succeeded(self, message: SummarizationCompletedShown) -> None:
        self.completed(message.event)

    @on(SummarizationFailedShown)
    def _fell_short(self, message: SummarizationFailedShown) -> None:
        self.failed(message.event)

    @on(SummarizerDisabledShown)
    def _turned_off(self, message: SummarizerDisabledShown) -> None:
        self.summaries_off(message.event)

    @on(TurnOver)
    def _turn_ended(self) -> None:
        self.interrupted()

    @on(TurnStarted)
    def _turn_started(self) -> None:
        self.conversation_moved_on()
