"""Forking a saved session: a new session holding the conversation as it was before one of
its turns (or as it is now), its header naming the parent; the original file and the
workspace's files are left as they are (docs/adr/0058-session-search-rename-fork.md)."""

from __future__ import annotations

import json
import os
import time
from typing import Any

from forge.agent.history.rewind import session_turns
from forge.agent.history.session_file import (
    SESSION_FILE_MODE,
    TOOL_LOADING_RECORD,
    SessionNotFoundError,
    SessionStore,
    apply_replacement,
    new_session_id,
    read_records,
)
from forge.config.paths import ensure_dir
from forge.llm.messages import Message

FORK_HEADER_FIELDS = ("forked_from", "fork_turn")
"""Header fields of a fork: the parent session's id and the turn it was forked before (0:
forked with the whole conversation)."""


def fork_session(store: SessionStore, session_id: str, turn: int | None = None) -> str:
    """Write a new session holding session `session_id`'s conversation as it was just before
    its turn number `turn` (1 is the first turn `/rewind` lists), or all of it when `turn` is
    None; its id. The new file is written like one Forge recorded (header, one `message`
    record per message, the deferred tools' state of that moment), so resuming it sends what
    the original sent at that point. SessionNotFoundError for no such session; ValueError
    for a turn it does not have."""
    path = store.path_for(session_id)
    if not path.is_file():
        raise SessionNotFoundError(f"no session with id {session_id}")
    turns = session_turns(path)
    stop_at = ""
    if turn is not None:
        if not 1 <= turn <= len(turns):
            raise ValueError(f"session {session_id} has turns 1 to {len(turns)}, not {turn}")
        stop_at = turns[turn - 1].id
    records, _ = read_records(path)
    header: dict[str, Any] = {}
    messages: list[Message] = []
    tool_loading: dict[str, Any] | None = None
    model = ""
    for record in records:
        kind = record.get("type")
        try:
            if kind == "header":
                header = record
            elif kind == "message":
                message = Message.from_record(record["message"])
                if message.id == stop_at:
                    break
                messages.append(message)
            elif kind == "replace":
                apply_replacement(messages, record)
            elif kind == TOOL_LOADING_RECORD:
                tool_loading = record
            elif kind == "model" and record.get("model"):
                model = str(record["model"])
        except (KeyError, TypeError, ValueError):
            continue  # replay skips the same records
    fork_id = new_session_id()
    kept = {key: value for key, value in header.items() if key not in ("id", "name", "recovered")}
    fork_header = {
        **kept,
        "type": "header",
        "id": fork_id,
        "created": time.time(),
        "model": model or header.get("model", ""),
        "forked_from": session_id,
        "fork_turn": turn or 0,
    }
    lines = [fork_header, *({"type": "message", "message": m.to_record()} for m in messages)]
    if tool_loading is not None:
        lines.append(tool_loading)
    ensure_dir(store.directory)
    target = store.path_for(fork_id)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, SESSION_FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.writelines(
            json.dumps(line, ensure_ascii=False, default=str) + "\n" for line in lines
        )
    return fork_id
