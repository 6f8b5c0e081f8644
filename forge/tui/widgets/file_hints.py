"""The `@` file completion list shown above the prompt (docs/adr/0030).

While a mention is being typed it shows the best matches of the workspace's file index, one
highlighted; the prompt routes Up/Down (move), Tab/Enter (complete) and Esc (close) here while
it is open. The index is built in a thread worker; the list says "indexing…" until it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from forge.text_safety import terminal_safe
from forge.tui.file_completion import (
    MAX_CANDIDATES,
    MAX_INDEX_FILES,
    FileIndex,
    agent_completions,
    fuzzy_rank,
    mention_at,
)


class FileHints(Static):
    """Candidate files for the mention at the cursor; hidden when there is none."""

    DEFAULT_CSS = """
    FileHints {
        height: auto;
        max-height: 10;
        padding: 0 1;
        color: $text-muted;
        background: $surface;
        display: none;
        &.-visible { display: block; }
    }
    """

    @dataclass
    class IndexBuilt(Message):
        """The file index finished building (posted from its thread)."""

    def __init__(self, index: FileIndex | None = None, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.index = index
        self.candidates: list[str] = []
        self.selected = 0
        self.mention_anchor: tuple[int, int] | None = None
        """(row, column) of the `@` the candidates are for."""
        self._dismissed: tuple[int, int] | None = None
        self.agent_names_source: Callable[[], Sequence[str]] = lambda: ()
        """The session's subagents, offered after `@agent-` (set by the app; docs/adr/0045)."""

    @property
    def active(self) -> bool:
        """Open with at least one candidate: the prompt's keys go to the list."""
        return self.has_class("-visible") and bool(self.candidates)

    @property
    def chosen(self) -> str | None:
        """The highlighted candidate."""
        return self.candidates[self.selected] if self.active else None

    def show_for(self, line: str, row: int, column: int) -> None:
        """Show the files matching the mention at (row, column), or hide."""
        found = mention_at(line, column)
        anchor = None if found is None else (row, found[0])
        if found is None or anchor == self._dismissed or self.index is None:
            self.hide()
            return
        self._dismissed = None
        if self.index.needs_build():
            self.run_worker(self._build, thread=True, group="file-index", exit_on_error=False)
        if anchor != self.mention_anchor:
            self.selected = 0
        self.mention_anchor = anchor
        if not self.index.ready:
            self.candidates = []
            self.set_class(True, "-visible")
            self.update("indexing the workspace's files…")
            return
        agents = agent_completions(found[1], self.agent_names_source()) if found[1] else []
        files = fuzzy_rank(found[1], self.index.files)
        self.candidates = [*agents, *files][: max(MAX_CANDIDATES, len(agents))]
        self.selected = min(self.selected, max(0, len(self.candidates) - 1))
        self.set_class(True, "-visible")
        self._render_candidates(found[1])

    def _render_candidates(self, query: str) -> None:
        if not self.candidates:
            # What was typed is text, never markup: "@notes[/b]" must not crash the prompt.
            self.update(Text(f"no file matches “{terminal_safe(query)}”"))
            return
        text = Text()
        for position, path in enumerate(self.candidates):
            if position:
                text.append("\n")
            shown = terminal_safe(path)  # a file name can hold any character but "/"
            if position == self.selected:
                text.append(f"> {shown}", style="bold reverse")
            else:
                text.append(f"  {shown}")
        assert self.index is not None
        if self.index.truncated:
            text.append(f"\n  (only the first {MAX_INDEX_FILES:,} files are indexed)")
        text.append("\n  Tab/Enter completes · ↑↓ choose · Esc closes", style="dim")
        self.update(text)

    def move(self, step: int) -> None:
        """Highlight the next (1) or previous (-1) candidate, wrapping around."""
        if self.candidates:
            self.selected = (self.selected + step) % len(self.candidates)
            self._render_candidates("")

    def dismiss(self) -> None:
        """Close the list until another mention is typed."""
        self._dismissed = self.mention_anchor
        self.hide()

    def hide(self) -> None:
        """Hide the list."""
        self.candidates = []
        self.mention_anchor = None
        self.set_class(False, "-visible")

    def _build(self) -> None:
        assert self.index is not None
        self.index.build()
        self.post_message(self.IndexBuilt())
