"""Waiting for a client's answer to a future the agent handed out (approval, question)."""

from __future__ import annotations

import asyncio
from typing import Any

NO_USER_ANSWER = "no user available; decide yourself"
"""What `ask_question` returns when nobody can answer (`forge run`, which answers a question
the agent hands it with this)."""


class DismissedError(Exception):
    """The client cancelled the future instead of answering it."""


async def answer_of(future: asyncio.Future[Any]) -> Any:
    """The future's result; `DismissedError` if the client cancelled the future itself, while a
    cancellation of the waiting task propagates as usual."""
    try:
        return await future
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if future.cancelled() and (task is None or task.cancelling() == 0):
            raise DismissedError() from None
        raise
