"""The TUI's bell and desktop notice when a turn ends or waits for approval (docs/adr/0049).

The terminal says whether it is focused through focus events (Textual turns on mode 1004);
until it has sent one, focus is unknown and only the bell rings. The sequence is written
straight to the terminal (Textual's own `bell()` knows no desktop notice).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from forge.session.attention import AttentionReason, attention_text, terminal_signal

if TYPE_CHECKING:
    from forge.config.settings import Settings


class Attention:
    """The app's attention signals: `call`, and the focus the terminal reported."""

    def __init__(self, app: App[Any], settings: Callable[[], Settings | None]) -> None:
        self._app = app
        self._settings = settings
        self.focus_reported = False
        """The terminal has sent a focus event (so it supports them)."""

    def focus_changed(self) -> None:
        """The terminal reported focus gained or lost."""
        self.focus_reported = True

    def call(self, reason: AttentionReason, detail: str = "") -> None:
        """Ring the bell (and, with `ui.notify: desktop` while the terminal is not focused,
        ask for a desktop notice) as `ui.notify` says."""
        app, settings = self._app, self._settings()
        driver = app._driver
        if settings is None or driver is None or app.is_headless:
            return
        signal = terminal_signal(
            settings.ui.notify,
            attention_text(reason, detail),
            unfocused=self.focus_reported and not app.app_focus,
            environ=os.environ,
        )
        if signal:
            driver.write(signal)
            driver.flush()
