"""A resumed session's history on screen before the session is built (docs/adr/0032).

`show_preview` runs as the app mounts, before the first frame: it reads the session's newest
part and mounts a screenful of its rows, so a resumed session's first frame shows its last
answer; the settings, the provider and the tokenizer load after that frame as for a new
session. The work is bounded by the screen, not the session: a long file is read from its
end only (`PREVIEW_BYTES`; the session replays all of it later, in its thread), a short one is
replayed once and the session is built on that `ResumedSession`. `ChatView.show_rows` keeps
the rows on screen when the session's conversation ends with the same rows (older ones join
those waiting to be scrolled to); they differ only when a cut-off turn is noted.

Log records written while the session is read (a torn line skipped) are held and passed on
once the log file is configured: before that, Python would print them over the screen.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from forge.session.saved_sessions import ResumedSession, SessionNotFoundError, SessionStore
from forge.tui.history import HistoryRow, history_rows
from forge.tui.widgets.chat_blocks import AssistantBlock

if TYPE_CHECKING:
    from forge.tui.widgets.chat import ChatView

logger = logging.getLogger(__name__)


class HeldLogRecords(logging.Handler):
    """Holds the `forge` loggers' records until `release` hands them to the real handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self._logger = logging.getLogger("forge")
        self._logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def release(self) -> None:
        """Stop holding; pass every held record to the handlers configured since."""
        self._logger.removeHandler(self)
        for record in self.records:
            if record.levelno >= self._logger.getEffectiveLevel():
                self._logger.handle(record)
        self.records.clear()


ANSWER_BUILD_WAIT = 1.0
"""Seconds the first frame waits, at most, for the last answer's markdown to be built."""
PREVIEW_BYTES = 256 * 1024
"""The end of a long session file read for its first screen (hundreds of rows)."""


@dataclass
class SessionPreview:
    """What the start-up thread read of the session to resume."""

    rows: list[HistoryRow]
    """The rows of its newest part (all of it when `resumed` is set)."""
    resumed: ResumedSession | None
    """The whole session, when it was short enough to replay at once."""


def read_preview(
    workspace: Path, session_id: str | None, resume_latest: bool
) -> SessionPreview | None:
    """The session the command line asks to resume, read for its first screen: a long file's
    last `PREVIEW_BYTES` (rows of its newest part), else the whole session. None for a new
    session, or when it cannot be read (the session, reading it again, reports why)."""
    if session_id is None and not resume_latest:
        return None
    store = SessionStore()
    try:
        if session_id is None:
            session_id = store.latest_id_for(workspace)
            if session_id is None:
                return None
        session_id = store.find(workspace, session_id)
        tail = store.tail_messages(session_id, PREVIEW_BYTES)
        if tail is not None:
            return SessionPreview(history_rows(tail), None)
        conversation, log = store.resume(session_id)
    except (SessionNotFoundError, ValueError, OSError):
        return None
    messages = conversation.messages
    rows = history_rows(messages) if any(m.role == "user" for m in messages) else []
    return SessionPreview(rows, ResumedSession(session_id, conversation, log))


async def show_preview(
    chat: ChatView, workspace: Path, session_id: str | None, resume_latest: bool
) -> tuple[HeldLogRecords, SessionPreview | None]:
    """Show the newest rows of the session of `workspace` to resume in `chat`. Returns the log
    records held meanwhile (release them once logging is configured) and what was read (the
    session is built on it when it holds the whole session)."""
    held = HeldLogRecords()
    try:
        preview = read_preview(workspace, session_id, resume_latest)
    except Exception:  # a shortcut only: the session reads its file again and shows it
        logger.exception("could not read the session file ahead of the session")
        return held, None
    if preview is not None and preview.rows:
        await chat.show_rows(preview.rows)
        # The answer's document builds in its own task: let it finish before the session's
        # thread starts, which would share the interpreter with it and slow the first frame.
        answers = chat.query(AssistantBlock)
        if answers and answers.last().answer_text:
            with suppress(TimeoutError):
                await asyncio.wait_for(answers.last().built.wait(), ANSWER_BUILD_WAIT)
    return held, preview
