"""The /sessions picker: this workspace's sessions, newest first; typing filters them, Up and
Down choose, Enter resumes, Tab shows or hides a session's subagent sessions (collapsed under
their parent at first), Esc closes.

Which sessions a query keeps is one function, `SessionMatcher`: by default the title, name and
ID; /sessions passes `FullTextMatcher` (forge.agent.history.session_search), which also
searches what was said, and whose `line_for` gives the line shown under a session found that way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from forge.session.saved_sessions import SessionInfo
from forge.text_safety import terminal_safe

SessionMatcher = Callable[[SessionInfo, str], bool]
"""Whether a session belongs in the list for the typed query."""


def title_or_id_matches(info: SessionInfo, query: str) -> bool:
    """The query (any case) is part of the session's title or of its ID."""
    wanted = query.strip().casefold()
    return (
        not wanted
        or wanted in info.title.casefold()
        or wanted in info.name.casefold()
        or wanted in info.id.casefold()
    )


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One line of the picker: a session, whether it is a child, and its children's count."""

    info: SessionInfo
    child: bool = False
    children: int = 0
    expanded: bool = False
    found: str = ""
    """The line of the session that holds the query, when its text (not its title) matched."""


def picker_rows(
    sessions: Sequence[SessionInfo],
    query: str,
    expanded: set[str],
    matches: SessionMatcher = title_or_id_matches,
) -> list[SessionRow]:
    """The rows to show: each top-level session that matches (or has a child that does),
    followed by its children when it is expanded or a query found them."""
    ids = {info.id for info in sessions}
    children: dict[str, list[SessionInfo]] = {}
    for info in sessions:
        if info.parent in ids:
            children.setdefault(info.parent, []).append(info)
    rows: list[SessionRow] = []
    for info in sessions:
        if info.parent in ids:
            continue
        kids = list(reversed(children.get(info.id, [])))  # in the order they ran
        found = [kid for kid in kids if query.strip() and matches(kid, query)]
        if not matches(info, query) and not found:
            continue
        shown = kids if info.id in expanded else found
        rows.append(
            SessionRow(info, children=len(kids), expanded=bool(shown), found=_found(matches, info))
        )
        rows.extend(SessionRow(kid, child=True, found=_found(matches, kid)) for kid in shown)
    return rows


def _found(matches: SessionMatcher, info: SessionInfo) -> str:
    line_for = getattr(matches, "line_for", None)  # FullTextMatcher's; a plain function has none
    return str(line_for(info.id)) if callable(line_for) else ""


def row_label(row: SessionRow, current_id: str) -> Content:
    """Two lines: the title (a child's with its agent); then the full ID, when, how long,
    the model, and the children folded under it."""
    info = row.info
    title = terminal_safe(info.label) or "(no title)"
    if row.child:
        title = f"  └ {terminal_safe(info.agent)}: {title}"
    first = Content(title)
    if info.id == current_id:
        first += Content.styled("  (this session)", "$text-accent")
    updated = datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
    details = [info.id, updated, f"{info.messages} messages", terminal_safe(info.model)]
    if info.forked_from:
        details.append(f"fork of {info.forked_from}")
    if row.children:
        sign = "▾" if row.expanded else "▸"
        plural = "s" if row.children != 1 else ""
        details.append(f"{sign} {row.children} subagent session{plural} (Tab)")
    indent = "      " if row.child else "  "
    label = first + "\n" + Content.styled(indent + " · ".join(details), "dim")
    if row.found:
        label += "\n" + Content.styled(
            indent + "“" + terminal_safe(row.found) + "”", "$text-accent"
        )
    return label


class SessionsScreen(ModalScreen[str | None]):
    """The picker; dismisses with the chosen session's ID, or None."""

    CSS_PATH = "sessions.tcss"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("down", "move(1)", "Next", show=False),
        Binding("pageup", "move(-5)", "Previous page", show=False),
        Binding("pagedown", "move(5)", "Next page", show=False),
        Binding("tab", "toggle_children", "Subagent sessions", priority=True),
    ]

    def __init__(
        self,
        sessions: Sequence[SessionInfo],
        current_id: str,
        matches: SessionMatcher = title_or_id_matches,
    ) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.current_id = current_id
        self.matches = matches
        self.expanded: set[str] = set()
        self.rows: list[SessionRow] = []
        self.filter = Input(
            placeholder="Type to search titles, names and what was said", id="sessions-filter"
        )
        self.listing = OptionList(id="sessions-list")

    def compose(self) -> ComposeResult:
        with Vertical(id="sessions-dialog"):
            yield Label(f"Sessions in this workspace ({len(self.sessions)})", id="sessions-title")
            yield self.filter
            yield self.listing
            yield Static(
                "Up/Down: choose · Enter: resume · Tab: subagent sessions · Esc: close",
                id="sessions-keys",
                markup=False,
            )

    def on_mount(self) -> None:
        self._show()
        self.filter.focus()

    @property
    def query_text(self) -> str:
        """What is typed in the filter."""
        return self.filter.value

    def _show(self, keep: str | None = None) -> None:
        self.rows = picker_rows(self.sessions, self.query_text, self.expanded, self.matches)
        listing = self.listing
        listing.clear_options()
        listing.add_options(
            Option(row_label(row, self.current_id), id=f"row-{index}")
            for index, row in enumerate(self.rows)
        )
        if self.rows:
            ids = [row.info.id for row in self.rows]
            listing.highlighted = ids.index(keep) if keep in ids else 0

    def highlighted_row(self) -> SessionRow | None:
        """The row Enter would resume."""
        index = self.listing.highlighted
        return self.rows[index] if index is not None and index < len(self.rows) else None

    @on(Input.Changed, "#sessions-filter")
    def _filter(self) -> None:
        self._show()

    def action_move(self, step: int) -> None:
        """Move the highlight by `step` rows (stopping at the ends)."""
        listing = self.listing
        if not self.rows:
            return
        current = listing.highlighted or 0
        listing.highlighted = max(0, min(len(self.rows) - 1, current + step))

    def action_toggle_children(self) -> None:
        """Show or hide the highlighted session's subagent sessions."""
        row = self.highlighted_row()
        if row is None:
            return
        parent = row.info.parent if row.child else row.info.id
        self.expanded ^= {parent}
        self._show(keep=parent)

    @on(Input.Submitted, "#sessions-filter")
    def _resume_highlighted(self) -> None:
        row = self.highlighted_row()
        if row is not None:
            self.dismiss(row.info.id)

    @on(OptionList.OptionSelected, "#sessions-list")
    def _resume_clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.rows[event.option_index].info.id)

    def action_cancel(self) -> None:
        """Close without resuming."""
        self.dismiss(None)
