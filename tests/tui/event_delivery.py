"""Deliver one agent event to a widget as the app does, for widget tests without the app's
turn worker: the event's message (from the dispatcher's table) is handled by the widget and
by each of its descendants that shows that kind of event, before this returns."""

from __future__ import annotations

from typing import Any

from textual.widget import Widget

from forge.tui.event_dispatch import route_of


async def show_event(widget: Widget, event: Any) -> None:
    """Handle `event` in `widget` and its descendants, as if the dispatcher had posted it."""
    message_class, _ = route_of(event)
    for target in [widget, *widget.walk_children(Widget)]:
        await target._on_message(message_class(event))  # type: ignore[call-arg]


async def deliver(app: Any, event: Any) -> None:
    """Hand `event` to each region of `app` that shows it, as the dispatcher posts it,
    awaiting each handler (posting and pausing would depend on how busy the machine is)."""
    message_class, regions = route_of(event)
    for region in regions:
        await app.dispatcher.regions[region]._on_message(message_class(event))  # type: ignore[call-arg]
