"""Unified diffs of file edits, for approval previews and the edit's result metadata."""

from __future__ import annotations

import difflib


def unified_diff(old: str, new: str, path: str, *, existed: bool = True) -> str:
    """A unified diff from `old` to `new` with git-style a/ b/ headers ('' if they are equal).

    A file that did not exist is shown as coming from /dev/null.
    """
    if old == new and existed:
        return ""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}" if existed else "/dev/null",
        tofile=f"b/{path}",
    )
    # Lines without a trailing newline would run into the next diff line; mark them as git does.
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )


def diff_stats(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) in a unified diff."""
    added = removed = 0
    in_hunk = False
    for line in diff.splitlines():
        # The ---/+++ file headers precede the first hunk; inside hunks "---" is a removed line.
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            added += 1
        elif in_hunk and line.startswith("-"):
            removed += 1
    return added, removed
