"""Following a background command as it runs (issue 40, docs/adr/0057): its new output in
whole lines, then how it ended. `forge run` streams these while its turn runs and until the
run ends; the command runs on threads of its own, so following is polling."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from forge.session.background import BackgroundCommand

POLL_SECONDS = 0.25


@dataclass(frozen=True)
class BackgroundLines:
    """New output of background command `command_id` (started by call `call_id`): whole
    lines, each ending in a newline (the last piece may lack one when the command ended)."""

    call_id: str
    command_id: str
    text: str


@dataclass(frozen=True)
class BackgroundEnded:
    """Background command `command_id` ended: its state ("exited 0", "exit (exit code
    -15)", …) and exit code."""

    call_id: str
    command_id: str
    state: str
    exit_code: int | None


BackgroundUpdate = BackgroundLines | BackgroundEnded


def is_background_start(metadata: dict[str, object]) -> str | None:
    """The id of the background command a finished call started (None: it started none)."""
    started = metadata.get("background_id")
    return started if metadata.get("background") is True and isinstance(started, str) else None


async def follow(
    entry: BackgroundCommand, call_id: str, *, poll: float = POLL_SECONDS
) -> AsyncIterator[BackgroundUpdate]:
    """Yield `entry`'s output in whole lines as it comes, then its ending."""
    offset = 0
    pending = ""
    while True:
        running = entry.running  # read first: the output read after it is complete
        piece = entry.output.read(offset)
        offset = piece.next_offset
        pending += piece.text
        whole, _, rest = pending.rpartition("\n")
        if not running:
            if pending:
                yield BackgroundLines(call_id, entry.id, pending)
            yield BackgroundEnded(call_id, entry.id, entry.state(), entry.exit_code)
            return
        if whole or pending.endswith("\n"):
            yield BackgroundLines(call_id, entry.id, whole + "\n")
            pending = rest
        await asyncio.sleep(poll)
