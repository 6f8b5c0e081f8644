"""`recall`: the exact text of an earlier tool output that was masked, cut or summarized.

Placeholders and summaries name the original by a short id (`forge.context.recall`); this
read-only tool (no approval) returns it from the session file (`SessionArchive`), so it works
after `--continue`. `start_line`/`end_line` page through a long original. Without an id,
`query` finds outputs and summaries by exact words or a regular expression (`regex`) and returns
verbatim spans with their recall keys (`forge.context.recall_search`, docs/adr/0050). Its own
output is an ordinary tool output: masked like any other once old. An unknown id, or one removed by
/rewind, is a tool error the model can read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.history.recall_archive import RecallError, SessionArchive
from forge.agent.tools.arguments import Boolean, Integer, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.context.recall import RECALL_TOOL
from forge.context.recall_search import QueryError, compile_query, search_originals
from forge.llm.protocols import ToolSpec


class RecallArgs(ToolArguments):
    """`recall`'s arguments."""

    id: str = Field(default="")
    start_line: Integer | None = None
    end_line: Integer | None = None
    query: str | None = None
    regex: Boolean = False
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
            "`length` characters from character `offset` (for a long original). Without an "
            "id, `query` finds earlier outputs and summaries by exact words (or a regular "
            "expression with regex=true) and returns the matching lines with their ids."
        ),
        parameters=tool_schema(RecallArgs),
    )
    arguments_model = RecallArgs

    def __init__(self, archive: SessionArchive) -> None:
        self.archive = archive

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "recall: 3f9a2c", or "recall: “parse_date”" for a query."""
        key = str(arguments.get("id") or "").strip()
        query = str(arguments.get("query") or "").strip()
        if not key and query:
            return f"{RECALL_TOOL}: “{' '.join(query.split())[:80]}”"
        return f"{RECALL_TOOL}: {key}".rstrip(": ")

    async def run(self, args: RecallArgs, context: ToolContext) -> ToolResult:
        """The original's text (or the lines asked for); with a query and no id, the spans
        that match."""
        key = args.id
        if not key.strip() and args.query is not None:
            return self._search(args.query, regex=args.regex)
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
        # A recalled image comes back as an image (docs/adr/0055, part 2).
        images = tuple(image for image in recalled.message.images if image.loaded)
        return ToolResult(content=text, metadata={"recalled": recalled.id}, images=images)

    def _search(self, query: str, *, regex: bool) -> ToolResult:
        try:
            pattern = compile_query(query, regex=regex)
        except QueryError as error:
            raise ToolError(str(error)) from None
        try:
            originals = self.archive.originals()
        except RecallError as error:
            raise ToolError(str(error)) from None
        spans, left_out = search_originals(originals, pattern)
        if not spans:
            return ToolResult(content=f"no earlier output or summary matches {query.strip()!r}")
        text = "\n".join(span.render() for span in spans)
        if left_out:
            text += f"\n[{left_out} more matching spans left out: narrow the query]"
        return ToolResult(content=text, metadata={"matches": len(spans) + left_out})


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
