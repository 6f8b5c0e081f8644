"""`/tasks`: the model's background commands (issue 40, docs/adr/0057) — each with its
state, runtime and last lines; Enter shows the highlighted one's live output, `s` stops it,
Esc closes. Refreshed twice a second (the commands run and end on threads of their own).
Their output is data: shown as plain text, never markup (docs/adr/0035)."""

from __future__ import annotations

import asyncio

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from forge.session.background import BackgroundCommand, BackgroundCommands
from forge.text_safety import terminal_safe

REFRESH_SECONDS = 0.5
LIVE_LINES = 12
"""Lines of the highlighted command's output shown after Enter."""
EMPTY = "No background commands. The model starts one with execute_command background: true."


def runtime_text(seconds: float) -> str:
    """E.g. "42s", "3m05s", "1h02m"."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def task_row(entry: BackgroundCommand) -> str:
    """Two lines: id, state, runtime and command; then its last output line."""
    command = terminal_safe(entry.command.splitlines()[0] if entry.command else "")
    last = entry.last_lines(1)
    tail = terminal_safe(last[0]) if last else "(no output yet)"
    return f"{entry.id}  {entry.state()}  {runtime_text(entry.runtime)}  {command}\n    {tail}"


class TasksScreen(ModalScreen[None]):
    """The background commands of the session; closes with nothing to return."""

    CSS_PATH = "tasks.tcss"
    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("s", "stop", "Stop"),
    ]

    def __init__(self, commands: BackgroundCommands) -> None:
        super().__init__()
        self.commands = commands
        self.showing: str | None = None
        """The id whose live output is shown (Enter), if any."""
        self._rows: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="tasks-body"):
            yield Static(
                "Background commands · Enter live output · s stop · Esc close",
                id="tasks-title",
                markup=False,
            )
            yield OptionList(id="tasks-list")
            yield Static("", id="tasks-output", markup=False)

    def on_mount(self) -> None:
        self.refresh_tasks()
        self.query_one(OptionList).focus()
        self.set_interval(REFRESH_SECONDS, self.refresh_tasks)

    def refresh_tasks(self) -> None:
        """Rebuild the rows and the live output from the commands as they are now."""
        entries = self.commands.all()
        rows = [task_row(entry) for entry in entries] or [EMPTY]
        listing = self.query_one(OptionList)
        if rows != self._rows:
            highlighted = listing.highlighted
            listing.clear_options()
            listing.add_options(
                [
                    Option(Content(row), id=entry.id, disabled=False)
                    for row, entry in zip(rows, entries, strict=False)
                ]
                or [Option(Content(EMPTY), disabled=True)]
            )
            if entries:
                listing.highlighted = min(highlighted or 0, len(entries) - 1)
            self._rows = rows
        output = self.query_one("#tasks-output", Static)
        entry = self.commands.get(self.showing) if self.showing else None
        if entry is None:
            output.display = False
            return
        start = max(0, entry.output.total - 8000)
        lines = entry.output.read(start).text.splitlines()[-LIVE_LINES:]
        output.display = True
        output.update(terminal_safe(f"{entry.id} output:\n" + "\n".join(lines)))

    def _highlighted(self) -> str | None:
        listing = self.query_one(OptionList)
        if listing.highlighted is None or listing.option_count == 0:
            return None
        return listing.get_option_at_index(listing.highlighted).id

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter: show (or hide) the highlighted command's live output."""
        chosen = event.option.id
        self.showing = None if chosen == self.showing else chosen
        self.refresh_tasks()

    async def action_stop(self) -> None:
        """Stop the highlighted command and everything it started (off the event loop)."""
        chosen = self._highlighted()
        if chosen is None:
            return
        entry = self.commands.get(chosen)
        if entry is None or not entry.running:
            return
        await asyncio.to_thread(self.commands.stop, chosen)
        self.refresh_tasks()

    def action_close(self) -> None:
        """Close the screen."""
        self.dismiss(None)
