"""A unified diff drawn in colour: additions green, removals red, hunk headers highlighted."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from forge.text_safety import terminal_safe

MAX_DIFF_LINES = 80
"""Lines shown at most; the rest is summarized so one huge edit cannot flood the chat."""


def diff_content(diff: str, max_lines: int = MAX_DIFF_LINES) -> Content:
    """`diff` as styled content, cut after `max_lines` lines with a count of what was left.
    The files' text is made terminal-safe (a file can hold control sequences)."""
    lines = terminal_safe(diff).rstrip("\n").splitlines()
    shown = lines[:max_lines]
    parts: list[Content] = []
    for line in shown:
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "$text-success on $success-muted"
        elif line.startswith("-"):
            style = "$text-error on $error-muted"
        elif line.startswith("@@"):
            style = "$text-accent"
        else:
            style = ""
        parts.append(Content.styled(line, style) if style else Content(line))
    if len(lines) > max_lines:
        parts.append(Content.styled(f"… {len(lines) - max_lines} more lines", "italic dim"))
    return Content("\n").join(parts)


class DiffView(Static):
    """Shows one edit's diff."""

    DEFAULT_CSS = """
    DiffView {
        height: auto;
        padding: 0 1;
        background: $surface;
    }
    """

    def __init__(self, diff: str) -> None:
        super().__init__(diff_content(diff), markup=False)
        self.diff = diff
