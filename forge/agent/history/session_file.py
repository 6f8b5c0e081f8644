"""Sessions: every conversation change appended to a JSON-lines file as it happens.

A session file `<id>.jsonl` lives under `sessions_dir()`. Its first line is a header record;
every later line is one `message` (an appended message), one `replace` (messages replaced in
place by summaries, pruned markers, an updated system prompt, or a /rewind), or a marker that
replay skips (`model`, `rewind`). Replaying the records in
order rebuilds the conversation. Each line is flushed as written, so a crash loses at most the
line being written, and a torn last line is skipped with a warning on resume. A torn or corrupt
line anywhere — the header included — is skipped with a warning: a lost header is rebuilt from
what its torn line still holds, or from the workspace line of the recorded system prompt, so
the session is still listed and found by `--continue`. The format is described in
docs/adr/0014-session-format.md.
"""

from __future__ import annotations

import json
import logging
import os
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from forge.agent.history.image_store import images_dir, load_all, store_images
from forge.config.ephemeral import is_ephemeral
from forge.config.paths import ensure_dir, sessions_dir
from forge.context.conversation import Conversation
from forge.llm.messages import Message
from forge.unicode_repair import (
    may_hold_surrogates,
    repaired,
    repaired_value,
    replaced_characters,
)

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
SESSION_FILE_SUFFIX = ".jsonl"
SUMMARY_DIRECTORY_SUFFIX = ".summaries"
SESSION_FILE_MODE = 0o600
REDACTED = "[redacted]"
NAME_RECORD = "name"
"""The record type of a session's name (`SessionLog.record_name`; the last one counts)."""
TOOL_LOADING_RECORD = "mcp_tools"
"""The record type of the deferred MCP tools' state (docs/adr/0054)."""
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,80}$")


class SessionNotFoundError(LookupError):
    """No session file has this id."""


def new_session_id() -> str:
    """A sortable, unique id: creation time plus random hex, e.g. `20250101-120000-1a2b3c`."""
    return f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def workspace_key(workspace: Path | str) -> str:
    """The workspace as stored in headers: an absolute, resolved path string."""
    return str(Path(workspace).expanduser().resolve())


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a session listing shows about one session file."""

    id: str
    path: Path
    workspace: str
    created: float
    updated: float
    """When the file last changed (seconds since the epoch)."""
    model: str
    messages: int
    """Message records in the file (appends only; replacements are not counted)."""
    title: str
    """The first line of the first user message, shortened."""
    problems: tuple[str, ...] = ()
    """What was wrong with the file and skipped or rebuilt (e.g. a torn first line)."""
    parent: str = ""
    """For a subagent's session: the id of the session whose `task` call ran it."""
    agent: str = ""
    """For a subagent's session: the agent's name (docs/adr/0045)."""
    name: str = ""
    """The name given with /rename or `forge sessions --rename` ("" when none: the title)."""
    forked_from: str = ""
    """For a fork (/fork, `forge --resume ID --fork`): the id of the session it came from."""

    @property
    def label(self) -> str:
        """What lists show for the session: its name, else its title."""
        return self.name or self.title


@dataclass(frozen=True)
class ResumedSession:
    """A saved session read back: its id, its conversation and the log that appends to it
    (`SessionStore.open_resumed`); handed to `build_session` so the file is read once."""

    id: str
    conversation: Conversation
    log: SessionLog


class SessionLog:
    """Appends one conversation's changes to its session file; a `ConversationObserver`.

    Nothing is written until the first user message arrives, so opening Forge and leaving
    without asking anything leaves no empty session behind (and `--continue` keeps finding
    the last real one). After that, every record is written and flushed at once. Secrets —
    `redact` and every one the process knows of (`forge.config.secrets`) — are replaced by
    "[redacted]" in every line, whatever produced them.
    """

    def __init__(
        self,
        path: Path,
        header: dict[str, Any],
        *,
        redact: Sequence[str] = (),
        exists: bool = False,
    ) -> None:
        self.path = path
        self.header = header
        self._secrets = tuple(secret for secret in redact if secret)
        self._pending: list[str] = [] if exists else [self._encode(header)]
        self._started = exists
        self._conversation: Conversation | None = None
        self.problems: tuple[str, ...] = ()
        """What resuming found wrong with the file (skipped lines, a rebuilt header)."""
        self.costs: dict[str, Any] | None = None
        """The last cost ledger recorded (`record_costs`; read back by a resume)."""
        self.tool_loading: dict[str, Any] | None = None
        """The last deferred-tools record (`record_tool_loading`; read back by a resume)."""

    @property
    def id(self) -> str:
        """The session id (the file name without its suffix)."""
        return str(self.header["id"])

    @property
    def started(self) -> bool:
        """True once the file exists on disk."""
        return self._started

    def attach(self, conversation: Conversation) -> None:
        """Observe `conversation` from now on (earlier messages must already be in the file)."""
        self._conversation = conversation
        conversation.add_observer(self)

    def record_model(self, model: str) -> None:
        """Write a `model` record: the session continues on `model` (listings show the model
        last used, not only the one the session began with)."""
        if model and model != self.header.get("model"):
            self._write({"type": "model", "model": model})
            self.header = {**self.header, "model": model}

    def add_to_header(self, fields: dict[str, Any]) -> bool:
        """Put `fields` in the header, while it is not written yet (a new session before its
        first message); whether it was (a resumed or started session's header is kept)."""
        if self._started or not self._pending:
            return False
        self.header = {**self.header, **fields}
        self._pending[0] = self._encode(self.header)
        return True

    def record_name(self, name: str) -> None:
        """Write a `name` record: the session is called `name` from now on (lists and the
        header show it instead of the title; docs/adr/0058)."""
        self._write({"type": NAME_RECORD, "name": name})
        self.header = {**self.header, "name": name}

    def record_costs(self, ledger: dict[str, Any]) -> None:
        """Write a `costs` record (the session's cost ledger, `CostLedger.to_record`) when it
        changed; a resume reads the last one (`costs`)."""
        if ledger != self.costs:
            self._write({"type": "costs", "ledger": ledger})
            self.costs = ledger

    def record_tool_loading(self, record: dict[str, Any]) -> None:
        """Write the deferred MCP tools' state (`ToolDeferral.to_record`: the decision and the
        tools loaded) when it changed; a resume reads the last one (`tool_loading`)."""
        if record != self.tool_loading:
            self._write(record)
            self.tool_loading = record

    def record_rewind(self, turn_id: str) -> None:
        """Write a `rewind` record: the conversation goes back to before turn `turn_id` (the
        `replace` record that follows holds it; docs/adr/0027-checkpoints.md)."""
        self._write({"type": "rewind", "turn": turn_id})

    def set_redactions(self, redact: Sequence[str]) -> None:
        """Replace the secrets kept out of the file (e.g. after the API key changed)."""
        self._secrets = tuple(secret for secret in redact if secret)

    # --- ConversationObserver ------------------------------------------------------------------
    def on_append(self, message: Message) -> None:
        """Write a `message` record (its images' bytes beside, once: `image_store`)."""
        if message.images:
            store_images(images_dir(self.path), (message,))
        self._write({"type": "message", "message": message.to_record()})
        if message.role == "user" and not self._started:
            self._start()

    def on_replace(self, removed: Sequence[Message], inserted: Sequence[Message]) -> None:
        """Write a `replace` record: the removed ids, where, and the inserted messages."""
        store_images(images_dir(self.path), (message for message in inserted if message.images))
        self._write(
            {
                "type": "replace",
                "start": self._start_index(removed, inserted),
                "removed": [message.id for message in removed],
                "inserted": [message.to_record() for message in inserted],
            }
        )

    # --- writing -------------------------------------------------------------------------------
    def _start_index(self, removed: Sequence[Message], inserted: Sequence[Message]) -> int | None:
        # Observers run after the change, so the first inserted message is already in place.
        if self._conversation is None or not inserted:
            return None
        first = inserted[0]
        for position, message in enumerate(self._conversation.messages):
            if message is first:
                return position
        return None

    def _encode(self, record: dict[str, Any]) -> str:
        # Imported here: reading a session (a resume's first screen) must not wait for the
        # settings model this module pulls in (pydantic-settings).
        from forge.config.secrets import redact

        # The last guard: text that slipped past the edges' repair must not make every later
        # write of this session fail.
        line = repaired(json.dumps(record, ensure_ascii=False, default=str), "the session")
        return redact(line, REDACTED, self._secrets) + "\n"

    def _write(self, record: dict[str, Any]) -> None:
        line = self._encode(record)
        if not self._started:
            self._pending.append(line)
            return
        self._append_lines([line])

    def _start(self) -> None:
        self._started = True
        pending, self._pending = self._pending, []
        if not is_ephemeral():
            ensure_dir(self.path.parent)
        self._append_lines(pending)

    def _append_lines(self, lines: Sequence[str]) -> None:
        if is_ephemeral():  # `forge run --ephemeral`: the conversation lives in memory only
            return
        try:
            descriptor = os.open(
                self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, SESSION_FILE_MODE
            )
            with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
                _finish_torn_line(self.path, handle)
                handle.writelines(lines)
                handle.flush()
        except OSError as error:
            # Losing the log must not end the user's session; say so once per failure.
            logger.warning("could not write session %s: %s", self.path, error)


def _finish_torn_line(path: Path, handle: TextIO) -> None:
    """If the file ends mid-line (a crash while writing), end that line first, so the next
    record starts on its own line instead of being glued to the torn one."""
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb") as reader:
        reader.seek(size - 1)
        if reader.read(1) != b"\n":
            handle.write("\n")


class SessionStore:
    """The directory of session files: create, resume, list, and locate summaries."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else sessions_dir()

    def path_for(self, session_id: str) -> Path:
        """The file of session `session_id`; ValueError for an id that is not a plain name."""
        if not _SESSION_ID.match(session_id):
            raise ValueError(f"not a valid session id: {session_id!r}")
        return self.directory / f"{session_id}{SESSION_FILE_SUFFIX}"

    def summary_dir(self, session_id: str) -> Path:
        """Where the context manager writes this session's markdown summaries (not created)."""
        return self.directory / f"{session_id}{SUMMARY_DIRECTORY_SUFFIX}"

    def create(
        self,
        workspace: Path | str,
        model: str,
        *,
        redact: Sequence[str] = (),
        parent: str = "",
        agent: str = "",
    ) -> SessionLog:
        """A new session log (the file appears with the first user message). `parent` and
        `agent`: a subagent's session, listed under its parent's and never `--continue`d."""
        session_id = new_session_id()
        header = {
            "type": "header",
            "version": FORMAT_VERSION,
            "id": session_id,
            "workspace": workspace_key(workspace),
            "created": time.time(),
            "model": model,
        }
        if parent:
            header |= {"parent": parent, "agent": agent}
        return SessionLog(self.path_for(session_id), header, redact=redact)

    def resume(
        self, session_id: str, *, redact: Sequence[str] = ()
    ) -> tuple[Conversation, SessionLog]:
        """The conversation of session `session_id` and a log that appends to the same file.

        Attach the log to the conversation (`SessionLog.attach`) to record further changes.
        """
        path = self.path_for(session_id)
        if not path.is_file():
            raise SessionNotFoundError(f"no session with id {session_id}")
        header, messages, problems, costs, tool_loading = _replay(path)
        header = {**header, "id": session_id}
        log = SessionLog(path, header, redact=redact, exists=True)
        log.problems = tuple(problems)
        log.costs = costs
        log.tool_loading = tool_loading
        return Conversation(messages), log

    def open_resumed(
        self, workspace: Path | str, session_id: str | None, *, resume_latest: bool = False
    ) -> ResumedSession | None:
        """The session `session_id` names (a whole id, or a unique start or end of one of
        `workspace`'s), or with `resume_latest` the workspace's latest one, read back; None
        when there is none to resume. SessionNotFoundError or ValueError as `find` raises."""
        if session_id is None:
            session_id = self.latest_id_for(workspace) if resume_latest else None
            if session_id is None:
                return None
        session_id = self.find(workspace, session_id)
        conversation, log = self.resume(session_id)
        return ResumedSession(session_id, conversation, log)

    def rename(self, session_id: str, name: str) -> None:
        """Give session `session_id` the name `name` (a `name` record appended to its file;
        SessionNotFoundError when there is no such file)."""
        path = self.path_for(session_id)
        if not path.is_file():
            raise SessionNotFoundError(f"no session with id {session_id}")
        SessionLog(path, {"type": "header", "id": session_id}, exists=True).record_name(name)

    def tail_messages(self, session_id: str, max_bytes: int) -> list[Message] | None:
        """The messages recorded in the last `max_bytes` of session `session_id`'s file, read
        without replaying the rest: the newest part of a long conversation, for a first
        screen. None when that part cannot stand alone (it holds a `replace` or `rewind`,
        which may change older messages) or the file is no longer than that (replay it)."""
        path = self.path_for(session_id)
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if size <= max_bytes:
                return None
            handle.seek(size - max_bytes)
            tail = handle.read().decode("utf-8", errors="replace")
        messages: list[Message] = []
        for line in tail.split("\n")[1:]:  # the first piece is the end of a cut line
            try:
                record = json.loads(line) if line.strip() else None
                record = _repaired_record(line, record)
            except json.JSONDecodeError:
                continue  # a torn line: the replay skips it too
            if not isinstance(record, dict):
                continue
            if record.get("type") in ("replace", "rewind"):
                return None
            if record.get("type") == "message" and isinstance(record.get("message"), dict):
                try:
                    messages.append(Message.from_record(record["message"]))
                except (KeyError, TypeError, ValueError):
                    continue
        return messages

    def load(self, session_id: str) -> Conversation:
        """The conversation recorded in session `session_id` (SessionNotFoundError if none)."""
        conversation, _ = self.resume(session_id)
        return conversation

    def list_sessions(self, workspace: Path | str | None = None) -> list[SessionInfo]:
        """Sessions, most recently updated first; only this workspace's when one is given."""
        if not self.directory.is_dir():
            return []
        wanted = workspace_key(workspace) if workspace is not None else None
        sessions: list[SessionInfo] = []
        for path in self.directory.glob(f"*{SESSION_FILE_SUFFIX}"):
            info = _read_info(path)
            if info is not None and (wanted is None or info.workspace == wanted):
                sessions.append(info)
        sessions.sort(key=lambda info: (info.updated, info.id), reverse=True)
        return sessions

    def workspace_of(self, session_id: str) -> str | None:
        """The workspace session `session_id`'s header names, or the one recovered for a lost
        header (None when neither names one)."""
        path = self.path_for(session_id)
        workspace = _header_workspace(path)[0]
        if workspace is None:
            info = _read_info(path)
            workspace = info.workspace if info is not None else None
        return workspace or None

    def find(self, workspace: Path | str, fragment: str) -> str:
        """The id of the session named by `fragment`: a whole id, or a unique start or end of
        one of `workspace`'s session ids (what `/sessions` shows). SessionNotFoundError names
        the problem when none or several match."""
        if _SESSION_ID.match(fragment) and self.path_for(fragment).is_file():
            return fragment
        sessions = self.list_sessions(workspace)
        matches = [s.id for s in sessions if s.id.startswith(fragment) or s.id.endswith(fragment)]
        if len(matches) == 1 and fragment:
            return matches[0]
        if not matches or not fragment:
            raise SessionNotFoundError(
                f"no session with id {fragment} (none of this workspace's ids starts or ends so)"
            )
        raise SessionNotFoundError(
            f"several sessions match {fragment}: {', '.join(matches[:5])}; give more of the id"
        )

    def latest_id_for(self, workspace: Path | str) -> str | None:
        """The id of the session `latest_for` finds, reading only the header line of each file
        newer than it (a whole file only where that line is unreadable): `--continue` stays
        quick however long the workspace's sessions are."""
        if not self.directory.is_dir():
            return None
        wanted = workspace_key(workspace)
        candidates = []
        for path in self.directory.glob(f"*{SESSION_FILE_SUFFIX}"):
            try:
                updated = path.stat().st_mtime
            except OSError:
                continue
            candidates.append((updated, path.name.removesuffix(SESSION_FILE_SUFFIX), path))
        for _, session_id, path in sorted(candidates, reverse=True):
            workspace_of, parent = _header_workspace(path)
            if workspace_of is None:
                info = _read_info(path)
                workspace_of = info.workspace if info is not None else ""
                parent = info.parent if info is not None else ""
            if workspace_of == wanted and not parent:  # a subagent's session is no resume
                return session_id
        return None

    def latest_for(self, workspace: Path | str) -> SessionInfo | None:
        """The most recently updated session of `workspace`, or None."""
        sessions = self.list_sessions(workspace)
        return sessions[0] if sessions else None


_HEADER_FIELD = re.compile(r'"(workspace|model|created)":\s*("(?:[^"\\]|\\.)*"|[0-9.eE+-]+)')
"""A header field still readable in a torn or partly garbled first line."""
_WORKSPACE_LINE = re.compile(r"^- Workspace: (.+)$", re.MULTILINE)
"""The workspace line of the system prompt (forge.agent.system_prompt)."""


def _header_workspace(path: Path) -> tuple[str | None, str]:
    """The workspace named by the file's first line when that line is a whole header record
    (None when it is not: torn, garbled, or not a header), and its parent session's id ("" for
    a session of its own)."""
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
        record = json.loads(first)
    except (OSError, json.JSONDecodeError):
        return None, ""
    if not isinstance(record, dict) or record.get("type") != "header":
        return None, ""
    return str(record.get("workspace") or ""), str(record.get("parent") or "")


def _repaired_record(line: str, record: Any) -> Any:
    """A record whose text may hold lone surrogates (written by a version before the repair,
    as JSON escapes) with them replaced, so the resumed conversation can be sent again."""
    return repaired_value(record, "a session file") if may_hold_surrogates(line) else record


def read_records(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every readable record, and what was wrong: a torn or garbled line is skipped with a
    warning, and a lost header is rebuilt (see `_rebuilt_header`) and put first."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        lines = handle.read().split("\n")
    unreadable_first = ""
    repaired_lines = repaired_characters = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            before = replaced_characters()
            record = _repaired_record(line, json.loads(line))
            if replaced := replaced_characters() - before:
                repaired_lines += 1
                repaired_characters += replaced
        except ValueError:  # not JSON, or an integer beyond Python's 4,300-digit bound
            where = "torn last line" if number >= len(lines) - 1 else "unreadable line"
            logger.warning("session %s: skipped %s %d", path.name, where, number)
            problems.append(f"skipped {where} {number}")
            if not records and not unreadable_first:
                unreadable_first = line
            continue
        if isinstance(record, dict):
            records.append(record)
    if records and not any(record.get("type") == "header" for record in records):
        records.insert(0, _rebuilt_header(unreadable_first, records))
        problems.append(
            "its header line is unreadable; recovered from the first valid record"
            + ("" if records[0].get("workspace") else " (its workspace is unknown)")
        )
        logger.warning("session %s: %s", path.name, problems[-1])
    if repaired_lines:
        problems.append(repaired_problem(repaired_characters, repaired_lines))
    return records, problems


def repaired_problem(characters: int, lines: int) -> str:
    """What a resume says of the lines it repaired (issue 34: the count reaches the user)."""
    return (
        f"replaced {characters} invalid character(s) (lone surrogates, written by an older "
        f"version) in {lines} line(s) with U+FFFD"
    )


def _rebuilt_header(torn_line: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A header for a file whose header line was lost: the fields the torn line still holds,
    else the workspace named in the recorded system prompt."""
    header: dict[str, Any] = {"type": "header", "version": FORMAT_VERSION, "recovered": True}
    for name, raw in _HEADER_FIELD.findall(torn_line):
        try:
            header[name] = json.loads(raw)
        except ValueError:
            continue
    if not isinstance(header.get("workspace"), str):
        header.pop("workspace", None)
        for message in _recorded_messages(records):
            if message.get("role") == "system":
                found = _WORKSPACE_LINE.search(str(message.get("content") or ""))
                if found:
                    header["workspace"] = found.group(1).strip()
                    break
    return header


def _recorded_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") == "message" and isinstance(record.get("message"), dict):
            messages.append(record["message"])
        elif record.get("type") == "replace":
            messages.extend(item for item in record.get("inserted") or [] if isinstance(item, dict))
    return messages


def _replay(
    path: Path,
) -> tuple[dict[str, Any], list[Message], list[str], dict[str, Any] | None, dict[str, Any] | None]:
    """The header, the message list the records build, in order, what was wrong, the last
    cost ledger recorded and the last deferred-tools record."""
    header: dict[str, Any] = {}
    messages: list[Message] = []
    costs: dict[str, Any] | None = None
    tool_loading: dict[str, Any] | None = None
    records, problems = read_records(path)
    for record in records:
        kind = record.get("type")
        try:
            if kind == "header":
                header = record
            elif kind == "message":
                messages.append(Message.from_record(record["message"]))
            elif kind == "replace":
                apply_replacement(messages, record)
            elif kind == "costs" and isinstance(record.get("ledger"), dict):
                costs = record["ledger"]
            elif kind == TOOL_LOADING_RECORD:
                tool_loading = record
            elif kind == NAME_RECORD and isinstance(record.get("name"), str):
                header = {**header, "name": record["name"]}
        except (KeyError, TypeError, ValueError) as error:
            logger.warning("session %s: skipped a bad %s record: %s", path.name, kind, error)
            problems.append(f"skipped a bad {kind} record")
    if any(message.images for message in messages):
        messages = load_all(images_dir(path), messages)
    return header, messages, problems, costs, tool_loading


def apply_replacement(messages: list[Message], record: dict[str, Any]) -> None:
    """Apply a `replace` record to `messages` in place: its removed run (found by ids, else at
    its recorded start) becomes its inserted messages; ValueError when the run is not there."""
    removed_ids: list[str] = list(record.get("removed") or [])
    inserted = [Message.from_record(item) for item in record.get("inserted") or []]
    start = _locate(messages, removed_ids, record.get("start"))
    messages[start : start + len(removed_ids)] = inserted


def _locate(messages: list[Message], removed_ids: list[str], start: Any) -> int:
    """Where the removed run begins: found by ids when there are any, else the recorded start."""
    if removed_ids:
        ids = [message.id for message in messages]
        for position in range(len(ids) - len(removed_ids) + 1):
            if ids[position : position + len(removed_ids)] == removed_ids:
                return position
        raise ValueError("the replaced messages are not in the session")
    if isinstance(start, int) and 0 <= start <= len(messages):
        return start
    raise ValueError("an insertion without a position")


def _read_info(path: Path) -> SessionInfo | None:
    return session_info(path, *read_records(path))


def session_info(
    path: Path, records: list[dict[str, Any]], problems: Sequence[str]
) -> SessionInfo | None:
    """What a listing shows about the session file `path` whose records are `records`."""
    header = next((record for record in records if record.get("type") == "header"), None)
    if header is None:
        return None
    message_records = [r.get("message") or {} for r in records if r.get("type") == "message"]
    first_user = next((m for m in message_records if m.get("role") == "user"), {})
    meta = first_user.get("meta")
    typed = meta.get("typed") if isinstance(meta, dict) else None  # message_meta.TYPED_KEY
    shown = typed if isinstance(typed, str) else first_user.get("content")
    title = str(shown or "").strip().split("\n", 1)[0]
    return SessionInfo(
        id=path.name.removesuffix(SESSION_FILE_SUFFIX),
        path=path,
        workspace=str(header.get("workspace") or ""),
        created=float(header.get("created") or 0.0),
        updated=path.stat().st_mtime,
        model=next(
            (
                str(r["model"])
                for r in reversed(records)
                if r.get("type") == "model" and r.get("model")
            ),
            str(header.get("model") or ""),
        ),
        messages=len(message_records),
        title=title if len(title) <= 60 else title[:59] + "…",
        problems=tuple(problems),
        parent=str(header.get("parent") or ""),
        agent=str(header.get("agent") or ""),
        name=session_name(records),
        forked_from=str(header.get("forked_from") or ""),
    )


def session_name(records: Sequence[dict[str, Any]]) -> str:
    """The session's name: the last `name` record's (a name given by /rename)."""
    for record in reversed(records):
        if record.get("type") == NAME_RECORD and isinstance(record.get("name"), str):
            return str(record["name"])
    return ""
