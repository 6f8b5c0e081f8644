"""The TUI's side of background commands (issue 40, docs/adr/0057): `/tasks`, the status
pane's count, and telling the user which commands a session's end (exit, `/clear`) ended and
which a Forge that died left running."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge.session.core import Session
    from forge.tui.command_host import CommandHost
    from forge.tui.widgets.chat import ChatView


BACKGROUND_KEY = "alt+d"
"""Moves the model's running command to the background ("detach"). Ctrl+B is tmux's prefix;
an Alt+letter reaches the app through tmux, but Alt+B and Alt+F arrive as Ctrl+Left/Right
(iTerm's word keys). Shown as `bg` in the footer while a turn runs."""
MOVED_NOTICE = "The command goes on in the background (/tasks)"


def running_count(session: Session | None) -> int:
    """How many background commands run now (0 before the session)."""
    background = session.background if session is not None else None
    return len(background.running()) if background is not None else 0


async def open_tasks(app: CommandHost, session: Session, chat: ChatView) -> None:
    """`/tasks`: the screen of the session's background commands."""
    from forge.tui.screens.tasks import TasksScreen

    if session.background is None:
        await chat.add_notice("Background commands are not available in this session.")
        return
    app.push_screen(TasksScreen(session.background))


async def say_start_notices(session: Session, chat: ChatView) -> None:
    """What a dead Forge left running (ended now) and what a resumed session had running."""
    for notice in session.background_notices:
        await chat.add_notice(notice, kind="error")


async def end_background(session: Session, reason: str) -> list[str]:
    """End the session's background commands (off the loop: each has a grace period); one
    line per command ended."""
    if running_count(session) == 0:
        return []
    return await asyncio.to_thread(session.end_background, reason)
