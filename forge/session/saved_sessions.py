"""The saved sessions as the front ends use them (docs/adr/0059 Part 5): the store that lists,
reads and forks them, their summary rows and the search over them.

The files' format and the replay stay in `forge.agent.history`; a front end names them
through this module (`/sessions`, `/resume`, `/fork`, `--resume`, the editor's session list).
"""

from __future__ import annotations

from forge.agent.history.session_file import (
    ResumedSession,
    SessionInfo,
    SessionNotFoundError,
    SessionStore,
    read_records,
    session_info,
    workspace_key,
)
from forge.agent.history.session_search import FullTextMatcher, SessionSearch

__all__ = [
    "FullTextMatcher",
    "ResumedSession",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionSearch",
    "SessionStore",
    "fork_session",
    "read_records",
    "session_info",
    "workspace_key",
]


def fork_session(store: SessionStore, session_id: str, turn: int | None = None) -> str:
    """`forge.agent.history.session_fork.fork_session`, imported when a fork is asked for: the
    fork replays the conversation (mentions, the context's caps, the settings), which the
    TUI's start-up imports must not pull in."""
    from forge.agent.history.session_fork import fork_session as fork

    return fork(store, session_id, turn)
