"""The status pane: context gauge, session token usage, permission mode and cost, the
plan, and the summarization panel."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive, var
from textual.widget import Widget
from textual.widgets import Label, Static

from forge.agent.events import SummarizationCompleted, SummarizationFailed, UsageEvent
from forge.tui.messages import (
    ContextUsageShown,
    ContextWarningShown,
    SubagentEventShown,
    SummarizationCompletedShown,
    SummarizationFailedShown,
    SummarizationStartedShown,
    UsageEventShown,
)
from forge.tui.widgets.background_view import BackgroundView
from forge.tui.widgets.cost_view import CostView, ModeView
from forge.tui.widgets.formatting import format_tokens
from forge.tui.widgets.plan_view import PlanView
from forge.tui.widgets.sandbox_view import SandboxView
from forge.tui.widgets.subagents_panel import SubagentsPanel
from forge.tui.widgets.summarization_panel import SummarizationPanel

if TYPE_CHECKING:
    from forge.tui.session_controls import SessionState

RECENT_COMPACTIONS = 5
"""Finished summarization runs remembered for /context."""


class ContextGauge(Widget):
    """Tokens used of the budget, as a bar and a percentage; `-warning` and `-critical` past
    the configured thresholds."""

    DEFAULT_CSS = """
    ContextGauge {
        height: 3;
        color: $text-success;
        &.-warning { color: $text-warning; }
        &.-critical { color: $text-error; }
    }
    """

    current_tokens: reactive[int] = reactive(0)
    max_tokens: reactive[int] = reactive(0)
    warning: var[bool] = var(False, toggle_class="-warning")
    critical: var[bool] = var(False, toggle_class="-critical")

    def __init__(
        self, *, warning_threshold: float, critical_threshold: float, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.warning_threshold = warning_threshold
        self.critical_threshold = critical_threshold

    @property
    def fraction(self) -> float:
        """Share of the budget in use (0 when no budget is known)."""
        return self.current_tokens / self.max_tokens if self.max_tokens else 0.0

    def show(self, current_tokens: int, max_tokens: int) -> None:
        """Show a new reading."""
        self.current_tokens = current_tokens
        self.max_tokens = max_tokens
        self.critical = self.fraction >= self.critical_threshold
        self.warning = not self.critical and self.fraction >= self.warning_threshold

    def set_thresholds(self, warning_threshold: float, critical_threshold: float) -> None:
        """New thresholds (after a settings change); recolours the current reading."""
        self.warning_threshold = warning_threshold
        self.critical_threshold = critical_threshold
        self.show(self.current_tokens, self.max_tokens)

    def render(self) -> RenderResult:
        width = max(self.size.width, 10)
        filled = min(width, round(self.fraction * width))
        percent = f"{self.fraction:.0%}"
        used, budget = format_tokens(self.current_tokens), format_tokens(self.max_tokens)
        title = Content.assemble(("Context", "bold $foreground"), " " * (width - 7 - len(percent)))
        return Content("\n").join(
            [
                title + Content.styled(percent, "bold"),
                Content.assemble(("█" * filled, ""), ("░" * (width - filled), "$text-muted")),
                Content.styled(f"{used} / {budget} tokens", "$foreground"),
            ]
        )


class StatusPane(Vertical):
    """The right-hand pane; renders context and usage events, remembers recent compactions."""

    DEFAULT_CSS = """
    StatusPane {
        width: 34;
        height: 1fr;
        padding: 0 1;
        border-left: vkey $panel;
        .pane-title { text-style: bold; margin-top: 1; }
    }
    """

    def __init__(
        self,
        *,
        summarization_model: str,
        warning_threshold: float,
        critical_threshold: float,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.gauge = ContextGauge(
            warning_threshold=warning_threshold, critical_threshold=critical_threshold
        )
        self.summarization = SummarizationPanel(summarization_model)
        self.plan = PlanView(id="plan")
        self.subagents = SubagentsPanel(id="subagents")
        self.recent_compactions: deque[SummarizationCompleted | SummarizationFailed] = deque(
            maxlen=RECENT_COMPACTIONS
        )
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.mode_view = ModeView(id="mode")
        self.sandbox_view = SandboxView(id="sandbox")
        self.background_view = BackgroundView(id="background")
        self.cost_view = CostView(id="cost")
        self.session_source: Callable[[], SessionState | None] = lambda: None
        """The running agent's permission mode and cost (set by the app; None: not loaded)."""

    def compose(self) -> ComposeResult:
        yield self.gauge
        yield Label("Session", classes="pane-title")
        yield Static(self._usage_text(), id="usage", markup=False)
        yield self.mode_view
        yield self.sandbox_view
        yield self.background_view
        yield self.cost_view
        yield Label("", id="activity", markup=False)
        yield self.plan
        yield self.subagents
        yield self.summarization

    def _usage_text(self) -> str:
        return (
            f"in  {format_tokens(self.prompt_tokens)} tokens\n"
            f"out {format_tokens(self.completion_tokens)} tokens"
        )

    def show_usage(self, prompt_tokens: int, completion_tokens: int) -> None:
        """Show the session's tokens in and out (a resumed session's include earlier runs)."""
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.query_one("#usage", Static).update(self._usage_text())

    def reset_session(self) -> None:
        """A new session started: zero the usage, forget compactions, idle the panel."""
        self.prompt_tokens = self.completion_tokens = 0
        self.query_one("#usage", Static).update(self._usage_text())
        self.recent_compactions.clear()
        self.summarization.reset()
        self.plan.show_plan(None)
        self.refresh_session_lines()

    def refresh_session_lines(self) -> None:
        """Show the current permission mode and cost (after a request, a compaction, a mode
        change or a new session)."""
        current = self.session_source()
        self.mode_view.show(current.mode if current else None)
        self.sandbox_view.show(current.sandbox if current else None)
        if current is None:
            self.cost_view.show(None)
        else:
            self.cost_view.show(current.cost, current.unpriced)

    def show_activity(self, text: str) -> None:
        """One line about what Forge is doing ("working…", "2 queued"), or "" for nothing."""
        self.query_one("#activity", Label).update(text)

    # --- the events it shows (posted by `forge.tui.event_dispatch`) --------------------------
    @on(ContextUsageShown)
    @on(ContextWarningShown)
    @on(SummarizationStartedShown)
    def _context_measured(
        self, message: ContextUsageShown | ContextWarningShown | SummarizationStartedShown
    ) -> None:
        self.gauge.show(message.event.current_tokens, message.event.max_tokens)

    @on(SubagentEventShown)
    def _child_activity(self, message: SubagentEventShown) -> None:
        if isinstance(message.event.event, UsageEvent):
            self.refresh_session_lines()  # a running child's request counts at once

    @on(UsageEventShown)
    def _usage_reported(self, message: UsageEventShown) -> None:
        self.refresh_session_lines()  # a request reported usage
        event = message.event
        self.show_usage(event.session_prompt_tokens, event.session_completion_tokens)

    @on(SummarizationCompletedShown)
    @on(SummarizationFailedShown)
    def _summarization_ended(
        self, message: SummarizationCompletedShown | SummarizationFailedShown
    ) -> None:
        self.refresh_session_lines()  # a compaction ended (its cost)
        self.recent_compactions.append(message.event)
