"""Searching saved sessions by what was said in them (`forge sessions --search`, the /sessions
picker's filter; docs/adr/0058-session-search-rename-fork.md).

The text is kept in an index beside the session files (`search-index.sqlite3`, an SQLite FTS5
table with the trigram tokenizer, so any part of a word matches, in any case). The session
files are never written by it. Every search first compares each file's size and modification
time with what the index holds and reads again only the files that changed, appeared or went
away — files copied in from another machine are found like Forge's own. If the index cannot be
used (a locked or damaged database, an SQLite without FTS5), the files are scanned instead:
slower, the same answers.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge.agent.history.session_file import (
    SESSION_FILE_SUFFIX,
    SessionInfo,
    SessionStore,
    read_records,
    session_info,
    workspace_key,
)

logger = logging.getLogger(__name__)

INDEX_FILE = "search-index.sqlite3"
INDEX_VERSION = 1
ROWS_PER_SESSION = 1 << 24
"""Text rows of one session occupy the rowids `key * ROWS_PER_SESSION + n`, so a session's
rows are replaced by a rowid range (fast in FTS5) rather than a scan."""
CONVERSATION_KINDS = ("title", "name", "user", "answer")
"""What a search looks at by default; `include_tools` adds `tool` (tool calls and their
output, summaries, command output)."""
LINE_WIDTH = 100


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One session a search found: the session, where the text was and the line holding it."""

    info: SessionInfo
    kind: str
    """`title`, `name`, `user`, `answer` or `tool`."""
    line: str
    """The first line of the session that holds the text, shortened around it."""


def searchable_texts(records: Sequence[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """(kind, text) for each piece of a session's records a search looks at, in order: every
    message ever recorded (also those a summary later replaced), each once, and its names."""
    seen: set[str] = set()
    for record in records:
        kind = record.get("type")
        if kind == "name" and isinstance(record.get("name"), str):
            yield "name", record["name"]
        elif kind == "message" and isinstance(record.get("message"), dict):
            yield from _message_texts(record["message"], seen)
        elif kind == "replace":
            for message in record.get("inserted") or []:
                if isinstance(message, dict):
                    yield from _message_texts(message, seen)


def _message_texts(message: dict[str, Any], seen: set[str]) -> Iterator[tuple[str, str]]:
    identity = str(message.get("id") or "")
    if identity:
        if identity in seen:
            return
        seen.add(identity)
    role = message.get("role")
    content = str(message.get("content") or "")
    plain = message.get("kind") in (None, "normal")
    if role == "user":
        yield ("user" if plain else "tool"), content
    elif role == "assistant":
        yield ("answer" if plain else "tool"), content
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                yield "tool", f"{call.get('name', '')} {call.get('arguments', '')}"
    elif role == "tool":
        yield "tool", content


def matching_line(text: str, query: str) -> str:
    """The first line of `text` holding `query` (any case), shortened around it."""
    wanted = query.casefold()
    for line in text.splitlines() or [text]:
        at = line.casefold().find(wanted)
        if at < 0:
            continue
        line = line.strip()
        at = max(0, line.casefold().find(wanted))
        if len(line) <= LINE_WIDTH:
            return line
        start = max(0, min(at - LINE_WIDTH // 3, len(line) - LINE_WIDTH))
        piece = line[start : start + LINE_WIDTH]
        return ("…" if start else "") + piece + ("…" if start + LINE_WIDTH < len(line) else "")
    return text.strip().split("\n", 1)[0][:LINE_WIDTH]


class SessionSearch:
    """Search the sessions of a `SessionStore` through its index (see the module docstring)."""

    def __init__(self, store: SessionStore | None = None) -> None:
        self.store = store or SessionStore()
        self.index_path = self.store.directory / INDEX_FILE

    def search(
        self,
        query: str,
        workspace: Path | str | None = None,
        *,
        include_tools: bool = False,
        refresh: bool = True,
    ) -> list[SearchHit]:
        """The sessions whose title, name, user messages or answers (and with `include_tools`
        tool calls and output) hold `query`, in any case; only `workspace`'s when one is
        given; most recently updated first. `refresh=False` trusts the index as the last
        search left it (the picker refreshes once when it opens, not at each key)."""
        query = query.strip()
        if not query or not self.store.directory.is_dir():
            return []
        try:
            return self._search_index(query, workspace, include_tools, refresh)
        except sqlite3.Error as error:
            logger.warning("session search index unusable (%s); scanning the files", error)
            return self._search_files(query, workspace, include_tools)

    # --- the index -----------------------------------------------------------------------------
    def sessions(self, workspace: Path | str) -> list[SessionInfo]:
        """`SessionStore.list_sessions(workspace)` from the index, brought up to date first (so
        later `refresh=False` searches see every file): only changed files are read."""
        if not self.store.directory.is_dir():
            return []
        try:
            with closing(self._connect()) as connection:
                infos = list(self._refresh(connection).values())
        except sqlite3.Error as error:
            logger.warning("session search index unusable (%s)", error)
            return self.store.list_sessions(workspace)
        wanted = workspace_key(workspace)
        found = [info for info in infos if info.workspace == wanted]
        found.sort(key=lambda info: (info.updated, info.id), reverse=True)
        return found

    def _search_index(
        self, query: str, workspace: Path | str | None, include_tools: bool, refresh: bool
    ) -> list[SearchHit]:
        with closing(self._connect()) as connection:
            infos = self._refresh(connection) if refresh else self._known(connection)
            kinds = CONVERSATION_KINDS + (("tool",) if include_tools else ())
            marks = ",".join("?" for _ in kinds)
            if len(query) >= 3:  # a trigram index finds any part of three characters or more
                phrase = '"' + query.replace('"', '""') + '"'
                condition, parameter = "texts MATCH ?", phrase
            else:
                escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                condition, parameter = "line LIKE ? ESCAPE '\\'", f"%{escaped}%"
            rows = connection.execute(
                f"SELECT min(rowid) FROM texts WHERE {condition} AND kind IN ({marks}) "
                f"GROUP BY rowid / {ROWS_PER_SESSION}",
                (parameter, *kinds),
            ).fetchall()
            keys = {row[0] // ROWS_PER_SESSION: row[0] for row in rows}
            found: list[SearchHit] = []
            wanted = workspace_key(workspace) if workspace is not None else None
            for key, info in infos.items():
                hit_title = query.casefold() in info.id.casefold()
                if key not in keys and not hit_title:
                    continue
                if wanted is not None and info.workspace != wanted:
                    continue
                if key in keys:
                    kind, text = connection.execute(
                        "SELECT kind, line FROM texts WHERE rowid = ?", (keys[key],)
                    ).fetchone()
                    found.append(SearchHit(info, kind, matching_line(text, query)))
                else:
                    found.append(SearchHit(info, "id", info.label))
        found.sort(key=lambda hit: (hit.info.updated, hit.info.id), reverse=True)
        return found

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.index_path, timeout=5)
        try:
            os.chmod(self.index_path, 0o600)  # it holds what the sessions say
            (version,) = connection.execute("PRAGMA user_version").fetchone()
            if version != INDEX_VERSION:
                connection.executescript(
                    "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS texts;"
                    "CREATE TABLE files (key INTEGER PRIMARY KEY, name TEXT UNIQUE, size INTEGER,"
                    " mtime INTEGER, info TEXT);"
                    "CREATE VIRTUAL TABLE texts USING fts5(kind UNINDEXED, line,"
                    " tokenize='trigram');"
                    f"PRAGMA user_version = {INDEX_VERSION};"
                )
        except BaseException:
            connection.close()
            raise
        return connection

    def _refresh(self, connection: sqlite3.Connection) -> dict[int, SessionInfo]:
        """Bring the index up to date with the files; every session's info by its key."""
        on_disk: dict[str, os.stat_result] = {}
        with os.scandir(self.store.directory) as entries:
            for directory_entry in entries:
                name = directory_entry.name
                if name.endswith(SESSION_FILE_SUFFIX) and directory_entry.is_file():
                    try:
                        on_disk[name] = directory_entry.stat()
                    except OSError:
                        continue
        known = {
            name: (key, size, mtime, info)
            for key, name, size, mtime, info in connection.execute(
                "SELECT key, name, size, mtime, info FROM files"
            )
        }
        infos: dict[int, SessionInfo] = {}
        with connection:
            for name, (key, _, _, _) in known.items():
                if name not in on_disk:
                    self._forget(connection, key)
            for name, status in on_disk.items():
                entry = known.get(name)
                if entry is not None and entry[1:3] == (status.st_size, status.st_mtime_ns):
                    if entry[3]:
                        infos[entry[0]] = _info_from_json(self.store.directory / name, entry[3])
                    continue
                if entry is not None:
                    self._forget(connection, entry[0])
                info = self._add(connection, name, status)
                if info is not None:
                    infos[info[0]] = info[1]
        return infos

    def _known(self, connection: sqlite3.Connection) -> dict[int, SessionInfo]:
        return {
            key: _info_from_json(self.store.directory / name, info)
            for key, name, info in connection.execute("SELECT key, name, info FROM files")
            if info
        }

    def _forget(self, connection: sqlite3.Connection, key: int) -> None:
        connection.execute(
            "DELETE FROM texts WHERE rowid >= ? AND rowid < ?",
            (key * ROWS_PER_SESSION, (key + 1) * ROWS_PER_SESSION),
        )
        connection.execute("DELETE FROM files WHERE key = ?", (key,))

    def _add(
        self, connection: sqlite3.Connection, name: str, status: os.stat_result
    ) -> tuple[int, SessionInfo] | None:
        path = self.store.directory / name
        try:
            records, problems = read_records(path)
        except OSError:
            return None
        info = session_info(path, records, problems)
        cursor = connection.execute(
            "INSERT INTO files (name, size, mtime, info) VALUES (?, ?, ?, ?)",
            (name, status.st_size, status.st_mtime_ns, _info_to_json(info) if info else ""),
        )
        key = int(cursor.lastrowid or 0)
        if info is None:
            return None
        texts = [("title", info.title), *searchable_texts(records)]
        connection.executemany(
            "INSERT INTO texts (rowid, kind, line) VALUES (?, ?, ?)",
            (
                (key * ROWS_PER_SESSION + number, kind, text)
                for number, (kind, text) in enumerate(texts[: ROWS_PER_SESSION - 1])
                if text
            ),
        )
        return key, info

    # --- without the index ---------------------------------------------------------------------
    def _search_files(
        self, query: str, workspace: Path | str | None, include_tools: bool
    ) -> list[SearchHit]:
        kinds = CONVERSATION_KINDS + (("tool",) if include_tools else ())
        wanted = query.casefold()
        found: list[SearchHit] = []
        for path in self.store.directory.glob(f"*{SESSION_FILE_SUFFIX}"):
            records, problems = read_records(path)
            info = session_info(path, records, problems)
            if info is None:
                continue
            if workspace is not None and info.workspace != workspace_key(workspace):
                continue
            for kind, text in [("title", info.title), *searchable_texts(records)]:
                if kind in kinds and wanted in text.casefold():
                    found.append(SearchHit(info, kind, matching_line(text, query)))
                    break
            else:
                if wanted in info.id.casefold():
                    found.append(SearchHit(info, "id", info.label))
        found.sort(key=lambda hit: (hit.info.updated, hit.info.id), reverse=True)
        return found


class FullTextMatcher:
    """The /sessions picker's filter (a `SessionMatcher`): a session matches when its ID,
    title, name, user messages or answers hold the query. One index search per query typed;
    `line_for` gives the line that matched."""

    def __init__(self, search: SessionSearch, workspace: Path | str) -> None:
        self.search = search
        self.workspace = workspace
        self._query = ""
        self._hits: dict[str, SearchHit] = {}

    def __call__(self, info: SessionInfo, query: str) -> bool:
        """Whether `info` belongs in the list for `query` (every session for an empty one)."""
        query = query.strip()
        if not query:
            return True
        if query != self._query:
            hits = self.search.search(query, self.workspace, refresh=False)
            self._query, self._hits = query, {hit.info.id: hit for hit in hits}
        return info.id in self._hits or query.casefold() in info.label.casefold()

    def line_for(self, session_id: str) -> str:
        """The line that matched the last query in session `session_id` ("" if none)."""
        hit = self._hits.get(session_id)
        return hit.line if hit is not None and hit.kind in ("user", "answer", "tool") else ""


_INFO_FIELDS = (
    "id", "workspace", "created", "model", "messages", "title", "parent", "agent", "forked_from"
)  # fmt: skip


def _info_to_json(info: SessionInfo) -> str:
    fields: dict[str, Any] = {name: getattr(info, name) for name in _INFO_FIELDS}
    fields |= {"updated": info.updated, "problems": list(info.problems), "name": info.name}
    return json.dumps(fields, ensure_ascii=False)


def _info_from_json(path: Path, text: str) -> SessionInfo:
    fields = json.loads(text)
    fields["problems"] = tuple(fields.get("problems") or ())
    return SessionInfo(path=path, **fields)
