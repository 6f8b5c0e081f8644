"""`forge run`'s background commands (issue 40, docs/adr/0057): a command the model started
in the background stays in progress in the output, its lines streamed as they come and its
end said with its exit code. One follower per command (`forge.session.background_follow`),
started when the call that started it finishes; the run waits for them after it ended its
background commands, so every follower writes its end before the `result` record."""

from __future__ import annotations

import asyncio
import contextlib

from forge.agent.events import ToolCallFinished
from forge.headless.output import OutputWriter
from forge.session.background import BackgroundCommand
from forge.session.background_follow import follow, is_background_start
from forge.session.core import Session
from forge.session.events import SessionEvent

END_WAIT_SECONDS = 10.0
"""How long the run waits at most for its followers to write the ends (the commands were
ended already; this bounds a reader thread that does not drain)."""


class BackgroundFollowers:
    """The run's followers: `observe` each event, `finish` once the commands were ended."""

    def __init__(self, session: Session, writer: OutputWriter) -> None:
        self.session = session
        self.writer = writer
        self._tasks: list[asyncio.Task[None]] = []

    def observe(self, event: SessionEvent) -> None:
        """Start following the command a finished `execute_command` put in the background."""
        if not isinstance(event, ToolCallFinished) or event.is_error:
            return
        command_id = is_background_start(event.metadata)
        background = self.session.background
        entry = background.get(command_id) if command_id and background is not None else None
        if entry is None:
            return
        self._tasks.append(asyncio.create_task(self._follow(entry, event.call.id)))

    async def _follow(self, entry: BackgroundCommand, call_id: str) -> None:
        with contextlib.suppress(OSError):  # a gone stdout ends the following, not the run
            async for update in follow(entry, call_id):
                self.writer.background(update)

    async def finish(self) -> None:
        """Wait for every follower to write its command's end (or cancel it after
        `END_WAIT_SECONDS`)."""
        if not self._tasks:
            return
        _, late = await asyncio.wait(self._tasks, timeout=END_WAIT_SECONDS)
        for task in late:
            task.cancel()
