"""The running child agents in the status pane: one line each (name, current tool, turns,
tokens); hidden while none runs (docs/adr/0045)."""

from __future__ import annotations

from textual import on
from textual.widgets import Static

from forge.agent.events import MessageDelta, ReasoningDelta
from forge.tui.messages import SubagentActivity, TurnOver
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

    @on(SubagentActivity)
    def _activity(self, message: SubagentActivity) -> None:
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
        self._show()

    def _show(self) -> None:
        lines = [progress.summary() for progress in self.children_running.values()]
        self.update("Subagents\n" + "\n".join(f"▸ {line}" for line in lines) if lines else "")
        self.set_class(bool(lines), "-running")
