"""The `/cost` report in the chat: a table when the chat is wide enough for it, one block per
model when it is not (an 80-column terminal cut the table's columns to `reque…`, `cac…`).

The report is priced once, when /cost runs; both layouts are written then, and a resize only
switches between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events

from forge.agent.costs import format_dollars
from forge.tui.widgets.chat_blocks import NoticeBlock

if TYPE_CHECKING:
    from forge.agent.costs import CostReport

_HEADERS = ("kind", "model", "requests", "in", "cached", "out", "cost")


def table_width(report: CostReport) -> int:
    """Columns the /cost table needs to show every cell whole: each column as wide as its
    widest cell, plus a border and a space either side of each."""
    rows = [
        (
            line.kind,
            line.model,
            str(line.requests),
            f"{line.prompt:,}",
            f"{line.cached:,}",
            f"{line.output:,}",
            format_dollars(line.dollars, precise=True),
        )
        for line in report.lines
    ]
    widths = [max(len(cell) for cell in column) for column in zip(_HEADERS, *rows, strict=False)]
    return sum(widths) + 3 * len(widths) + 1


@dataclass(frozen=True)
class CostDetails:
    """The /cost report in both layouts, and the width the table needs."""

    wide: str
    narrow: str
    table_width: int

    def for_width(self, width: int) -> str:
        """The layout that fits `width` columns."""
        return self.wide if width >= self.table_width else self.narrow


class CostNotice(NoticeBlock):
    """A /cost report that keeps to the chat's width: the table, or one block per model."""

    def __init__(self, details: CostDetails, width: int) -> None:
        super().__init__(details.for_width(width))
        self.details = details

    async def on_resize(self, event: events.Resize) -> None:
        text = self.details.for_width(event.size.width)
        if text != self.text:
            await self.set_text(text)
