"""The key bar at the bottom: Textual's `Footer`, rebuilt only when what it shows changes.

Textual's `Footer` rebuilds all its keys each time the screen says its bindings may have
changed — at start-up six times (focus moves, widgets mount, the session arrives) for the same
five keys. Each rebuild mounts every `FooterKey` afresh and restyles each one three times
(mounted, then its `compact` class set and unset), about 10 ms of CPU on the UI thread, right
when the start-up worker needs it (docs/adr/0042).
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer


def shown_bindings(screen: Screen[Any]) -> tuple[tuple[object, ...], ...]:
    """What a footer on `screen` draws from: each active binding's key, what it shows and
    whether it is enabled, in order."""
    return tuple(
        (
            binding.key,
            binding.key_display,
            binding.action,
            binding.description,
            binding.show,
            binding.group,
            enabled,
            tooltip,
        )
        for _node, binding, enabled, tooltip in screen.active_bindings.values()
    )


class ForgeFooter(Footer):
    """A `Footer` that skips the rebuild when the bindings it would show are the ones it
    shows."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._scheduled_for: tuple[tuple[object, ...], ...] | None = None
        """The bindings of the last rebuild scheduled (None before the first)."""

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            shown = shown_bindings(screen)
            if self._bindings_ready and shown == self._scheduled_for:
                return  # a rebuild for exactly these bindings is done or pending
            self._scheduled_for = shown
        super().bindings_changed(screen)
