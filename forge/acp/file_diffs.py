"""An edit's unified diff as what an editor can place: ACP `diff` content and locations.

One diff per file, whole-file when the file on disk is the diff's known side — before the
edit (an approval's preview: the old text is on disk, the new is the diff applied to it) or
after it (a finished edit: the new text is on disk, the old is the diff taken back out) —
so the editor shows the change in its file. A new file is a diff from empty old text (not
null: editors such as Toad show no diff for a null old text). When the file no longer
matches (edited since, as on `session/load` of an old session), each hunk is its own diff
with its line in the call's `locations`, so the editor can still place it.

Line numbers in locations are zero-based (ACP's `line`, as Zed reads it): the first changed
line of each hunk in the new text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from acp import tool_diff_content
from acp.schema import FileEditToolCallContent, ToolCallLocation

NEW_FILE_HEADER = "--- /dev/null"
MAX_WHOLE_FILE_BYTES = 2_000_000
"""A larger file is shown as its hunks (an editor's diff of megabytes helps no one)."""


@dataclass
class Hunk:
    """One `@@` hunk: where it starts on each side and its lines (context in both)."""

    old_start: int
    new_start: int
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    first_change: int = -1
    """Zero-based line in the new text of the hunk's first added or removed line."""


@dataclass
class FileDiff:
    """What an editor is sent for one edited file."""

    contents: list[FileEditToolCallContent]
    locations: list[ToolCallLocation]


def parse_hunks(unified_diff: str) -> list[Hunk]:
    """The hunks of a unified diff, lines with their line ends as in the file."""
    hunks: list[Hunk] = []
    last: list[list[str]] = []
    for line in unified_diff.splitlines(keepends=True):
        if line.startswith("@@"):
            old_start, new_start = _starts(line)
            hunks.append(Hunk(old_start, new_start))
            last = []
        elif not hunks:  # the ---/+++ file headers
            continue
        elif line.startswith("\\"):  # "\ No newline at end of file": the last line has none
            for side in last:
                side[-1] = side[-1].rstrip("\n")
        else:
            hunk = hunks[-1]
            text, sign = line[1:], line[:1]
            last = []
            if sign in ("-", " "):
                hunk.old.append(text)
                last.append(hunk.old)
            if sign in ("+", " "):
                hunk.new.append(text)
                last.append(hunk.new)
            if sign in ("-", "+") and hunk.first_change < 0:
                hunk.first_change = max(0, hunk.new_start - 1) + len(hunk.new) - (sign == "+")
    return hunks


def _starts(header: str) -> tuple[int, int]:
    """(old start, new start) of "@@ -a,b +c,d @@" (one-based; 0 for an empty side)."""
    parts = header.split()
    return int(parts[1][1:].split(",")[0]), int(parts[2][1:].split(",")[0])


def _apply(lines: list[str], hunks: list[Hunk], *, forward: bool) -> list[str] | None:
    """`lines` with the hunks applied (forward: old → new; else new → old), or None when a
    hunk does not match them."""
    result: list[str] = []
    position = 0
    for hunk in hunks:
        start, expected, replacement = (
            (hunk.old_start, hunk.old, hunk.new)
            if forward
            else (hunk.new_start, hunk.new, hunk.old)
        )
        index = max(0, start - 1) if expected else start
        if index < position or lines[index : index + len(expected)] != expected:
            return None
        result += lines[position:index] + replacement
        position = index + len(expected)
    return result + lines[position:]


def file_diff(path: Path, unified_diff: str, *, edited: bool) -> FileDiff:
    """The editor's view of `unified_diff` on `path`; `edited`: the file on disk holds the
    new text (a finished edit), else the old (a preview)."""
    hunks = parse_hunks(unified_diff)
    is_new = unified_diff.startswith(NEW_FILE_HEADER) or f"\n{NEW_FILE_HEADER}" in unified_diff
    shown = str(path)
    locations = [
        ToolCallLocation(path=shown, line=hunk.first_change if hunk.first_change >= 0 else None)
        for hunk in hunks
    ] or [ToolCallLocation(path=shown, line=0)]
    if is_new:
        new_text = "".join(line for hunk in hunks for line in hunk.new)
        return FileDiff([tool_diff_content(shown, new_text, "")], locations[:1])
    whole = _whole_file(path, hunks, edited=edited)
    if whole is not None:
        old_text, new_text = whole
        return FileDiff([tool_diff_content(shown, new_text, old_text)], locations)
    contents = [tool_diff_content(shown, "".join(hunk.new), "".join(hunk.old)) for hunk in hunks]
    return FileDiff(contents, locations)


def _whole_file(path: Path, hunks: list[Hunk], *, edited: bool) -> tuple[str, str] | None:
    """(old text, new text) of the whole file, when the disk matches the diff's side."""
    try:
        if not hunks or path.stat().st_size > MAX_WHOLE_FILE_BYTES:
            return None
        on_disk = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = on_disk.splitlines(keepends=True)
    other = _apply(lines, hunks, forward=not edited)
    if other is None:
        return None
    return ("".join(other), on_disk) if edited else (on_disk, "".join(other))
