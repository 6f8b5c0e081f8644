"""Notifications that cannot carry a control sequence to the terminal.

Toasts quote config errors, file paths and server messages; Textual's toast passes ESC
through. Every `notify` of the app (a screen's or widget's `notify` delegates to it) makes its
message and title terminal-safe first (docs/adr/0035). Markup stays the caller's choice: text
from outside goes with `markup=False`.
"""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

from forge.text_safety import terminal_safe


class SafeNotifications(App[int]):
    """Mixin for the app: `notify` with terminal-safe text."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """`App.notify`, with `message` and `title` made terminal-safe."""
        super().notify(
            terminal_safe(message),
            title=terminal_safe(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )
