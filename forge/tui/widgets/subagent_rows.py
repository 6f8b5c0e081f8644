"""A child agent's tool calls folded under its `task` row in the chat (docs/adr/0045): the
row's status says what the child does now (agent, tool, turns, tokens), and its expandable
body lists the child's tool calls above the report it returns."""

from __future__ import annotations

from textual.widgets import Static

from forge.agent.events import MessageDelta, ReasoningDelta, SubagentEvent
from forge.tui.widgets.chat_blocks import ToolCallBlock
from forge.tui.widgets.subagent_progress import ChildProgress


class SubagentRows(Static):
    """The child's tool calls, one line each, inside the `task` row."""

    DEFAULT_CSS = """
    SubagentRows { color: $text-muted; padding: 0 0 1 0; }
    """

    def __init__(self) -> None:
        super().__init__("", markup=False, classes="subagent-rows")


class SubagentRowsTracker:
    """The progress of each `task` row's child, by call id (one per chat)."""

    def __init__(self) -> None:
        self.progress: dict[str, ChildProgress] = {}
        self.rows: dict[str, SubagentRows] = {}

    def clear(self) -> None:
        """A new chat: forget every child."""
        self.progress.clear()
        self.rows.clear()

    async def show(self, block: ToolCallBlock | None, event: SubagentEvent) -> None:
        """Take `event` into its child's progress and show it on `block` (the `task` row)."""
        if isinstance(event.event, MessageDelta | ReasoningDelta):
            return  # the child's text reaches the parent as its report, not live
        progress = self.progress.get(event.call_id)
        if progress is None:
            progress = self.progress[event.call_id] = ChildProgress(event.agent)
        progress.observe(event)
        if block is None:
            return
        if not progress.finished:
            block.set_status("running", progress.summary(named=False))
        rows = self.rows.get(event.call_id)
        if progress.tools and rows is None:
            rows = self.rows[event.call_id] = SubagentRows()
            await block.mount_detail(rows)
        if rows is not None:
            rows.update(progress.tool_lines())
