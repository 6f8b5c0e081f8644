"""The chat blocks of a resumed conversation's rows (`forge.tui.history`), built whole before
they are mounted, so a screenful of history mounts in one batch (docs/adr/0032)."""

from __future__ import annotations

from textual.widget import Widget

from forge.session.tool_names import USER_COMMAND_TOOL
from forge.tui.history import (
    AnswerRow,
    ExpansionRow,
    HistoryRow,
    HookRow,
    NoticeRow,
    SummaryRow,
    ToolRow,
    UserRow,
)
from forge.tui.widgets.chat_blocks import (
    AssistantBlock,
    ExpansionBlock,
    NoticeBlock,
    SummaryBlock,
    ToolCallBlock,
    UserMessageBlock,
)


def block_for(row: HistoryRow, *, show_reasoning: bool = True) -> Widget:
    """The block that shows `row`, as the live chat showed it once its turn was over."""
    if isinstance(row, UserRow):
        return UserMessageBlock(row.text)
    if isinstance(row, ExpansionRow):
        return ExpansionBlock(row.text)
    if isinstance(row, HookRow):
        from forge.tui.widgets.hook_notice import HookNoticeBlock

        return HookNoticeBlock(row.notice, agent=row.agent)
    if isinstance(row, AnswerRow):
        return AssistantBlock.recorded(row.text, row.reasoning, show_reasoning=show_reasoning)
    if isinstance(row, ToolRow):
        if row.call.name == USER_COMMAND_TOOL:  # the user ran it to see it: shown open
            block = ToolCallBlock(row.call, status=row.status, status_text=row.status_text)
            block.show_output(row.output)
            return block
        block = ToolCallBlock.recorded(
            row.call, row.status, row.status_text, row.output, diff=row.diff
        )
        if row.children:  # a `task` row: the child's calls folded under it, as live
            from forge.tui.widgets.subagent_progress import child_tool_lines
            from forge.tui.widgets.subagent_rows import SubagentRows

            rows = SubagentRows()
            rows.update(child_tool_lines(row.children))
            block.detail = rows
        return block
    if isinstance(row, SummaryRow):
        return SummaryBlock(row.text, label=row.label, replaced=row.replaced)
    assert isinstance(row, NoticeRow)
    return NoticeBlock(row.text, kind=row.kind)
