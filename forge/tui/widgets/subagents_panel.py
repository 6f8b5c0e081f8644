"""The running child agents in the status pane: one line each (name, current tool, turns,
tokens); hidden while none runs (docs/adr/0045). Two children of one agent are told apart by
the first words of their `task` prompts (docs/adr/0048)."""

from __future__ import annotations

from textual import on
from textual.widgets import Static

from forge.agent.events import MessageDelta, ReasoningDelta
from forge.session.tool_names import TASK_TOOL
from forge.tui.history import call_argument
from forge.tui.messages import SubagentEventShown, ToolCallStartedShown, TurnOver
from forge.tui.widgets.subagent_progress import ChildProgress


class SubagentsPanel(Static):
    """Each running child of the turn, updated from its events."""

    DEFAULT_CSS = """
    SubagentsPanel { display: none; margin-top: 1; }
    SubagentsPanel.-running { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", markup=False, id=id)
        self.children_running: dict[str, ChildProgress] = {}
        """By `task` call id, while they run."""
        self.prompts: dict[str, str] = {}
        """Each `task` call's prompt, by call id (this turn's)."""

    @on(ToolCallStartedShown)
    def _tool_started(self, message: ToolCallStartedShown) -> None:
        call = message.event.call
        if call.name == TASK_TOOL:
            self.prompts[call.id] = call_argument(call, "prompt")

    @on(SubagentEventShown)
    def _activity(self, message: SubagentEventShown) -> None:
        event = message.event
        progress = self.children_running.get(event.call_id)
        if progress is None:  # its first event: the child is running
            progress = self.children_running[event.call_id] = ChildProgress(event.agent)
        elif isinstance(event.event, MessageDelta | ReasoningDelta):
            return  # nothing the panel shows changes
        progress.observe(event)
        if progress.finished:
            del self.children_running[event.call_id]
        self._show()

    @on(TurnOver)
    def _turn_over(self) -> None:
        self.children_running.clear()
        self.prompts.clear()
        self._show()

    def _show(self) -> None:
        names = [progress.agent for progress in self.children_running.values()]
        lines = [
            progress.summary(
                task=self.prompts.get(call_id, "") if names.count(progress.agent) > 1 else ""
            )
            for call_id, progress in self.children_running.items()
        ]
        self.update("Subagents\n" + "\n".join(f"▸ {line}" for line in lines) if lines else "")
        self.set_class(bool(lines), "-running")
