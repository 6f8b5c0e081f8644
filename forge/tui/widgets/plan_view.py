"""The plan in the status pane: the model's `update_plan` checklist, live, compact.

One line per step ("✓" done, "▸" in progress, "○" pending), cut with an ellipsis rather than
wrapped. A long plan shows a window around the step in progress, with "✓ N done" and "… N
more" for what it leaves out, so it fits a 80x24 terminal. Hidden while there is no plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from forge.context.plan import PLAN_TOOL, Plan, PlanItem, PlanStatus, plan_from_meta, progress
from forge.llm.messages import Message
from forge.text_safety import terminal_safe
from forge.tui.messages import ToolCallFinishedShown

MAX_STEP_LINES = 10
"""Step lines shown in a roomy terminal (the window lines included)."""
NARROW_STEP_LINES = 4
"""Step lines shown when the screen is narrow (80x24)."""

_MARKS = {PlanStatus.DONE: "✓", PlanStatus.IN_PROGRESS: "▸", PlanStatus.PENDING: "○"}
_STYLES = {
    PlanStatus.DONE: "$text-muted",
    PlanStatus.IN_PROGRESS: "bold $text-accent",
    PlanStatus.PENDING: "$foreground",
}


def visible_lines(plan: Sequence[PlanItem], limit: int) -> list[tuple[str, PlanStatus | None]]:
    """The lines to show for `plan` in at most `limit` lines (limit ≥ 4): (text, status) for
    a step, (text, None) for a line standing in for steps left out. The window starts one step
    before the one in progress (else the first pending one)."""
    if len(plan) <= limit:
        return [(item.step, item.status) for item in plan]
    focus = next(
        (i for i, item in enumerate(plan) if item.status is PlanStatus.IN_PROGRESS),
        next((i for i, item in enumerate(plan) if item.status is PlanStatus.PENDING), len(plan)),
    )
    start = max(0, focus - 1)
    end = start + limit - (1 if start > 0 else 0) - 1  # leaving a line for "… N more"
    if end >= len(plan):
        end, start = len(plan), len(plan) - (limit - 1)
    lines: list[tuple[str, PlanStatus | None]] = []
    if start > 0:
        before = plan[:start]
        done = sum(1 for item in before if item.status is PlanStatus.DONE)
        lines.append((f"✓ {done} done" if done == start else f"… {start} earlier", None))
    lines.extend((item.step, item.status) for item in plan[start:end])
    if end < len(plan):
        lines.append((f"… {len(plan) - end} more", None))
    return lines


class PlanView(Widget):
    """The current plan as a compact checklist; `-empty` (hidden) while there is none."""

    DEFAULT_CSS = """
    PlanView {
        height: auto;
        margin-top: 1;
        &.-empty { display: none; }
    }
    """

    DEFAULT_CLASSES = "-empty"

    plan: reactive[Plan] = reactive((), layout=True)

    def watch_plan(self, plan: Plan) -> None:
        self.set_class(not plan, "-empty")

    def show_plan(self, plan: Plan | None) -> None:
        """Show `plan` (None or empty hides the view)."""
        self.plan = plan or ()

    def show_metadata(self, records: object) -> None:
        """Show the plan an `update_plan` result's metadata carries."""
        plan = plan_from_meta(records)
        if plan is not None:
            self.show_plan(plan)

    @on(ToolCallFinishedShown)
    def _tool_finished(self, message: ToolCallFinishedShown) -> None:
        """An `update_plan` call succeeded: show the plan it set."""
        event = message.event
        if event.call.name == PLAN_TOOL and not event.is_error:
            self.show_metadata(event.metadata.get("plan"))

    def show_messages(self, messages: Sequence[Message]) -> None:
        """Show the newest plan in a conversation (a resumed session)."""
        # Imported here: plan_pin reaches the settings models, which the CLI loads late.
        from forge.session.plan_view import current_plan

        self.show_plan(current_plan(messages))

    def render(self) -> RenderResult:
        plan = self.plan
        if not plan:
            return Content("")
        narrow = self.screen.has_class("-narrow") if self.is_attached else False
        limit = NARROW_STEP_LINES if narrow else MAX_STEP_LINES
        width = max(self.size.width, 8)
        lines = [
            Content.assemble(("Plan", "bold $foreground"), " ", (progress(plan), "$text-muted"))
        ]
        for text, status in visible_lines(plan, limit):
            if status is None:
                lines.append(Content.styled(_fit(text, width), "italic $text-muted"))
            else:
                lines.append(
                    Content.styled(_fit(f"{_MARKS[status]} {text}", width), _STYLES[status])
                )
        return Content("\n").join(lines)


def _fit(text: str, width: int) -> str:
    """`text` (the model's, made terminal-safe) cut to `width` cells with an ellipsis."""
    text = terminal_safe(text)
    return text if len(text) <= width else text[: width - 1] + "…"
