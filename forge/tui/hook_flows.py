"""Hooks in the TUI (docs/adr/0043): a session's start hooks run in a worker as the session
starts (their notices reach the chat through the dispatcher, like a turn's), and `/hooks`
lists every hook. Heavy modules stay out: the app imports this before its first frame."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from textual.app import App

if TYPE_CHECKING:
    from forge.agent.events import AgentEvent
    from forge.session.core import Session
    from forge.tui.event_dispatch import EventDispatcher


def start_session_hooks(
    app: App[Any], dispatcher: EventDispatcher, session: Session, source: str | None = None
) -> None:
    """Run `session`'s hook-file warnings and SessionStart hooks (`source`: startup, resume,
    clear; by default as the session was opened) in a worker of `app`, their notices through
    `dispatcher`, without holding the UI; the first prompt waits for their context."""
    app.run_worker(
        _show(dispatcher, session.start_hooks(source)),
        name="session-hooks",
        group="session-hooks",
        exit_on_error=False,
    )


def start_trusted_session_hooks(app: App[Any], session: Session) -> None:
    """After *Trust* answered before the first prompt: SessionStart for the project's hook
    files it let run (the user's already ran), shown like the start's."""
    dispatcher: EventDispatcher = app.dispatcher  # type: ignore[attr-defined]  # ForgeApp's
    app.run_worker(
        _show(dispatcher, session.start_trusted_hooks()),
        name="trusted-session-hooks",
        group="session-hooks",
        exit_on_error=False,
    )


async def _show(dispatcher: EventDispatcher, events: AsyncIterator[AgentEvent]) -> None:
    async for event in events:
        dispatcher.dispatch(event)
