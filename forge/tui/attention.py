"""The TUI's bell and desktop notice when a turn ends or waits for approval (docs/adr/0049).

The terminal says whether it is focused through focus events (Textual turns on mode 1004);
until it has sent one, focus is unknown and only the bell rings. The sequence is written
straight to the terminal (Textual's own `bell()` knows no desktop notice).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from textual import events
from textual.app import App

from forge.session.attention import AttentionReason, attention_text, terminal_signal

if TYPE_CHECKING:
    from forge.config.settings import Settings


class AttentionSignals(App[int]):
    """Mixed into `ForgeApp`: `call_attention`, and the focus the terminal reported."""

    settings: Settings
    _focus_reported = False
    """The terminal has sent a focus event (so it supports them)."""

    def on_app_focus(self, event: events.AppFocus) -> None:
        self._focus_reported = True

    def on_app_blur(self, event: events.AppBlur) -> None:
        self._focus_reported = True

    def call_attention(self, reason: AttentionReason, detail: str = "") -> None:
        """Ring the bell (and, with `ui.notify: desktop` while the terminal is not focused,
        ask for a desktop notice) as `ui.notify` says."""
        settings = getattr(self, "settings", None)
        if settings is None or self._driver is None or self.is_headless:
            return
        signal = terminal_signal(
            settings.ui.notify,
            attention_text(reason, detail),
            unfocused=self._focus_reported and not self.app_focus,
            environ=os.environ,
        )
        if signal:
            self._driver.write(signal)
            self._driver.flush()
