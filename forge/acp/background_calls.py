"""Background commands in an editor (issue 40, docs/adr/0057): the `execute_command` call
that started one (or that the user moved to the background) stays `in_progress` after the
turn, its card streaming the command's output, and becomes completed or failed when the
command ends (stopped, exited, or ended with the session). Followed by polling: the command
runs on threads of its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from acp import text_block, tool_content, update_tool_call

from forge.acp.updates import MAX_LIVE_OUTPUT
from forge.config.secrets import redact
from forge.session.background import BackgroundCommands

POLL_SECONDS = 0.5


async def follow_background(
    background: BackgroundCommands,
    call_id: str,
    command_id: str,
    send: Callable[[Any], Awaitable[None]],
    *,
    poll: float = POLL_SECONDS,
) -> None:
    """Stream command `command_id`'s output to the card of call `call_id` until it ends, then
    close the card (completed for exit code 0, else failed). A gone editor ends the
    following, not the command."""
    entry = background.get(command_id)
    if entry is None:
        return
    shown_total = -1
    with contextlib.suppress(ConnectionError):
        while True:
            running = entry.running  # read first: the output read after it is complete
            total = entry.output.total
            if total != shown_total or not running:
                shown_total = total
                text = entry.output.read(max(0, total - MAX_LIVE_OUTPUT)).text
                content = [tool_content(text_block(redact(text) or "(no output yet)"))]
                if running:
                    await send(update_tool_call(call_id, content=content))
                else:
                    ending = f"[{entry.id} {entry.state()}]"
                    content.append(tool_content(text_block(ending)))
                    if entry.exit_code == 0:
                        await send(update_tool_call(call_id, status="completed", content=content))
                    else:
                        await send(update_tool_call(call_id, status="failed", content=content))
                    return
            await asyncio.sleep(poll)
