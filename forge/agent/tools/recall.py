"""`recall`: the exact text of an earlier tool output that was masked, cut or summarized.

Placeholders and summaries name the original by a short id (`forge.context.recall`); this
read-only tool (no approval) returns it from the session file (`SessionArchive`), so it works
after `--continue`. `start_line`/`end_line` page through a long original. Its own output is an
ordinary tool output: masked like any other once old. An unknown id, or one removed by
/rewind, is a tool error the model can read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.recall_archive import RecallError, SessionArchive
from forge.agent.tools.arguments import Integer, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.context.recall import RECALL_TOOL
from forge.llm.protocols import ToolSpec


class RecallArgs(ToolArguments):
    """`recall`'s arguments."""

    id: str = Field()
    start_line: Integer | None = None
    end_line: Integer | None = None
    offset: Integer | None = None
    """First character to return (0-based): pages through a long original, such as a user
    message sent as its head and tail."""
    length: Integer | None = None
    """Characters to return from `offset` (default `PAGE_CHARACTERS`)."""


class RecallTool(ModelTool[RecallArgs]):
    """Returns an original output by the id its placeholder names."""

    spec = ToolSpec(
        name=RECALL_TOOL,
        description=(
            "The exact text of an output shortened to save context, by the id its placeholder "
            "names (`recall <id>`); optionally only lines start_line..end_line, or a page of "
            "`length` characters from character `offset` (for a long original)."
        ),
        parameters=tool_schema(RecallArgs),
    )
    arguments_model = RecallArgs

    def __init__(self, archive: SessionArchive) -> None:
        self.archive = archive

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "recall: 3f9a2c"."""
        return f"{RECALL_TOOL}: {str(arguments.get('id') or '').strip()}".rstrip(": ")

    async def run(self, args: RecallArgs, context: ToolContext) -> ToolResult:
        """The original's text (or the lines asked for)."""
        key = args.id
        try:
            recalled = self.archive.find(key)
        except RecallError as error:
            raise ToolError(str(error)) from None
        text = recalled.message.content
        start, end = args.start_line, args.end_line
        if start is not None or end is not None:
            text = _lines(text, start, end)
        if args.offset is not None or args.length is not None:
            text = _page(text, args.offset or 0, args.length, recalled.id)
        return ToolResult(content=text, metadata={"recalled": recalled.id})


PAGE_CHARACTERS = 20_000
"""Characters a page holds when `length` is not given."""


def _page(text: str, offset: int, length: int | None, key: str) -> str:
    """Characters offset..offset+length of `text`, and a last line saying where the page is
    and how to read on."""
    size = PAGE_CHARACTERS if length is None else length
    if offset < 0 or size <= 0:
        raise ToolError("offset must be 0 or more and length more than 0")
    if offset >= len(text):
        raise ToolError(
            f"offset {offset:,} is past the end: the original has {len(text):,} characters"
        )
    end = min(len(text), offset + size)
    more = f"; recall {key} offset={end} for more" if end < len(text) else " (the end)"
    return f"{text[offset:end]}\n[characters {offset:,}-{end:,} of {len(text):,}{more}]"


def _lines(text: str, start: int | None, end: int | None) -> str:
    lines = text.splitlines(keepends=True)
    first = max(1, start or 1)
    last = min(len(lines), end if end is not None else len(lines))
    if first > last:
        raise ToolError(f"lines {first}-{last} are empty: the original has {len(lines)} lines")
    return "".join(lines[first - 1 : last])
