"""The status pane's background line (issue 40): "background 2 running" while the model's
background commands run (`/tasks` lists them); nothing at all when none runs, so the pane is
as before. Read twice a second from the session (the commands end on threads of their own)."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Static

REFRESH_SECONDS = 0.5


def background_text(running: int) -> str:
    """The line for `running` commands ("" for none)."""
    return f"background {running} running · /tasks" if running else ""


class BackgroundView(Static):
    """Shown only while a background command runs."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.running_source: Callable[[], int] = lambda: 0
        """How many background commands run now (set by the app)."""
        self.text = ""
        self.display = False

    def on_mount(self) -> None:
        self.set_interval(REFRESH_SECONDS, self.refresh_count)

    def refresh_count(self) -> None:
        """Show the count now."""
        text = background_text(self.running_source())
        if text != self.text:
            self.text = text
            self.update(text)
            self.display = bool(text)
