"""`read_file`: a text file from the workspace, with line numbers, bounded in size."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import Integer, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.image_files import read_image_file
from forge.agent.tools.output import head_and_tail_lines
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.tools.text_files import read_regular_bytes
from forge.agent.tools.threads import run_in_daemon_thread
from forge.agent.tools.workspace import ReadableRoots, resolve_readable
from forge.llm.images import is_image_name
from forge.llm.protocols import ToolSpec

MAX_LINES = 2000
"""A read returning more lines than this is cut to its head and tail."""
MAX_CHARACTERS = 100_000
"""A read returning more characters than this is cut to its head and tail."""
MAX_LINE_CHARACTERS = 2000
"""A longer line (minified code, data) is shortened and marked."""
BINARY_SNIFF_BYTES = 8192
"""A NUL byte in this many leading bytes marks a file as binary, as git decides."""


class ReadFileArgs(ToolArguments):
    """`read_file`'s arguments."""

    path: str = Field(description="File path, relative to the workspace.")
    start_line: Integer | None = Field(
        default=None, description="First line to read, 1-based (default 1)."
    )
    end_line: Integer | None = Field(
        default=None, description="Last line to read, inclusive (default: the end of the file)."
    )


class ReadFileTool(ModelTool[ReadFileArgs]):
    """Reads a text file, numbering its lines; refuses binary files, anything that is not a
    regular file, and paths outside. Each read is recorded in the ledger `write_file` checks."""

    spec = ToolSpec(
        name="read_file",
        description=(
            "Read a text file in the workspace. Each line is prefixed with its 1-based number "
            "and ' | ' (the prefix is not part of the file). Large files come back as head and "
            "tail; read the elided part with start_line/end_line."
        ),
        parameters=tool_schema(ReadFileArgs),
    )
    arguments_model = ReadFileArgs

    def __init__(
        self, ledger: FileReadLedger | None = None, readable: ReadableRoots | None = None
    ) -> None:
        """`ledger` records what the model read (shared with the edit tools of a session);
        `readable`: folders outside the workspace it may read too (loaded skills')."""
        self.ledger = ledger if ledger is not None else FileReadLedger()
        self.readable = readable

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "read_file: src/app.py (lines 10-40)"."""
        line = f"read_file: {arguments.get('path', '?')}"
        start, end = arguments.get("start_line"), arguments.get("end_line")
        if start is not None or end is not None:
            line += f" (lines {start or 1}-{end if end is not None else 'end'})"
        return line

    async def run(self, args: ReadFileArgs, context: ToolContext) -> ToolResult:
        """The numbered lines asked for, or a `ToolError` naming what is wrong; an image file
        comes back as an image with a line describing it (docs/adr/0055, part 2)."""
        path, _, shown = resolve_readable(context.workspace, args.path, self.readable)
        if is_image_name(path.name) and not path.is_dir():
            image = await run_in_daemon_thread(read_image_file, path, shown)
            return ToolResult(
                content=f"{shown} is an image, attached: {image.describe()}",
                metadata={"path": shown},
                images=(image,),
            )
        data, content = await run_in_daemon_thread(
            _read_numbered, path, shown, args.start_line, args.end_line
        )
        self.ledger.record(path, data)
        return ToolResult(content=content, metadata={"path": shown})


def _read_numbered(
    path: Path, shown: str, start_line: int | None, end_line: int | None
) -> tuple[bytes, str]:
    """The file's bytes and the numbered lines asked for."""
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; use list_files to see what it holds")
    data = read_regular_bytes(path, shown)
    if data is None:
        raise ToolError(f"file '{shown}' does not exist")
    return data, _numbered(data, shown, start_line, end_line)


def _numbered(data: bytes, shown: str, start_line: int | None, end_line: int | None) -> str:
    return numbered_lines(data, shown, start_line, end_line).text


@dataclass(frozen=True, slots=True)
class NumberedLines:
    """What `numbered_lines` returns: the text (a header line, then the numbered lines) and
    which lines it holds (all 0 for an empty file)."""

    text: str
    first: int
    last: int
    total: int
    elided: bool


def numbered_lines(
    data: bytes, shown: str, start_line: int | None, end_line: int | None
) -> NumberedLines:
    """The lines asked for, numbered and bounded as `read_file` returns them (also used by
    @-mentions); `ToolError` for binary data and a bad range."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ToolError(
            f"'{shown}' is a binary file ({len(data)} bytes); read_file only reads text"
        )
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    total = len(lines)
    if total == 0:
        return NumberedLines(f"{shown} is empty", 0, 0, 0, elided=False)
    first = 1 if start_line is None else start_line
    last = total if end_line is None else min(end_line, total)
    if first < 1:
        raise ToolError("start_line must be 1 or more (lines are numbered from 1)")
    if first > total:
        raise ToolError(f"start_line {first} is past the end of '{shown}' ({total} lines)")
    if last < first:
        raise ToolError(f"end_line {end_line} is before start_line {first}")
    width = len(str(last))
    numbered = [
        f"{number:>{width}} | {_shorten(lines[number - 1].rstrip(chr(13)))}"
        for number in range(first, last + 1)
    ]
    head, elided, tail = head_and_tail_lines(numbered, MAX_LINES, MAX_CHARACTERS)
    header = f"{shown} (lines {first}-{last} of {total})"
    if not elided:
        return NumberedLines("\n".join([header, *head]), first, last, total, elided=False)
    marker = f"[... {elided} lines elided; read them with start_line/end_line ...]"
    text = "\n".join([header, *head, marker, *tail])
    return NumberedLines(text, first, last, total, elided=True)


def _shorten(line: str) -> str:
    if len(line) <= MAX_LINE_CHARACTERS:
        return line
    extra = len(line) - MAX_LINE_CHARACTERS
    return f"{line[:MAX_LINE_CHARACTERS]} … [line truncated: {extra} more characters]"
