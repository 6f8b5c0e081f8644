"""Checkpoints: every file Forge's file tools change, as it was before, grouped by user turn.

`write_file` and `apply_diff` tell the store before and after each write (`ToolContext.changes`).
The first change of a path in a turn keeps the path's earlier content (or that it did not
exist); every change notes the hash of what Forge left there, so a later edit by the user (or
by a command) is seen as a conflict instead of being overwritten silently.

The store lives beside the session file `<id>.jsonl`, in `<id>.checkpoints/`: `index.jsonl`
(appended records, folded on load) and `blobs/<sha256>` (each earlier content once). Its size
— the blobs — is bounded: whole turns are dropped, oldest first, to make room. Nothing here
uses git or touches the user's repository. See docs/adr/0027-checkpoints.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.agent.input.mentions import split_attachments
from forge.agent.subagents.mentions import without_agent_request
from forge.agent.tools.base import ToolError
from forge.agent.tools.workspace import resolve_in_workspace, workspace_root
from forge.config.paths import ensure_dir
from forge.config.secrets import redact
from forge.context.conversation import Conversation

logger = logging.getLogger(__name__)

CHECKPOINT_DIRECTORY_SUFFIX = ".checkpoints"
INDEX_NAME = "index.jsonl"
BLOB_DIRECTORY = "blobs"
FILE_MODE = 0o600


def checkpoint_dir(session_file: Path) -> Path:
    """The checkpoint directory of the session file `<id>.jsonl`: `<id>.checkpoints`."""
    return session_file.with_name(session_file.stem + CHECKPOINT_DIRECTORY_SUFFIX)


@dataclass(frozen=True, slots=True)
class TurnInfo:
    """The user turn a change belongs to: its user message's id, text and creation time."""

    id: str
    text: str
    created: float


def current_turn(conversation: Conversation) -> TurnInfo | None:
    """The turn running in `conversation`: its latest real user message (never summarized
    away, AGENTS.md invariant 2), or None before the first one."""
    index = conversation.latest_user_index()
    if index is None:
        return None
    message = conversation[index]
    typed, _ = split_attachments(message.content)  # what the user typed, not attached files
    typed = without_agent_request(typed)  # nor the instruction `@agent-` added
    return TurnInfo(message.id, typed, message.created_at)


@dataclass(slots=True)
class PathChange:
    """What one turn did to one path."""

    path: str
    """Workspace-relative, POSIX style."""
    before: str | None
    """sha256 of the content before the turn's first change; None: the file did not exist."""
    after: str | None
    """sha256 of what Forge last left there in this turn; None: no file."""
    kept: bool = True
    """False when the earlier content could not be kept (larger than the size bound)."""


@dataclass(slots=True)
class TurnCheckpoint:
    """The changes of one user turn, in the order the paths were first changed."""

    turn: str
    title: str
    created: float
    changes: dict[str, PathChange] = field(default_factory=dict)
    undone: bool = False
    dropped: bool = False
    """Its changes were forgotten to keep the store within its size bound."""


@dataclass(frozen=True, slots=True)
class FileRestore:
    """One path to put back: the content to restore, what Forge left, what is there now."""

    path: str
    target: str | None
    expected: str | None
    current: str | None
    kept: bool

    @property
    def needed(self) -> bool:
        """The file is not already as it was."""
        return self.current != self.target

    @property
    def conflict(self) -> bool:
        """Someone changed the file since Forge wrote it: restoring would lose that edit."""
        return self.needed and self.current != self.expected


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """Restoring `turns` (oldest first): every path they changed, as it was before them."""

    turns: tuple[TurnCheckpoint, ...]
    files: tuple[FileRestore, ...]

    @property
    def conflicts(self) -> list[FileRestore]:
        """Files edited since Forge wrote them."""
        return [file for file in self.files if file.conflict]


@dataclass(slots=True)
class RestoreOutcome:
    """What a restore did."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    """Files the undone turns created, deleted again."""
    skipped: list[str] = field(default_factory=list)
    """Conflicting files left as they are (the user chose to keep their edits)."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) for files that could not be put back."""


def content_hash(data: bytes) -> str:
    """The key of a content in the store."""
    return hashlib.sha256(data).hexdigest()


def _read_state(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


class CheckpointStore:
    """One session's checkpoints: records file changes, plans and applies restores.

    `current` says which turn a change belongs to (see `current_turn`). `max_bytes` bounds
    the stored contents; it may be changed at any time and applies from the next change.
    """

    def __init__(
        self,
        directory: Path,
        workspace: Path,
        *,
        max_bytes: int,
        current: Callable[[], TurnInfo | None] = lambda: None,
        on_restored: Callable[[Path], None] | None = None,
    ) -> None:
        """`on_restored` is told the resolved path of every file a restore put back or
        removed (the read ledger forgets it: the model must read it again)."""
        self.directory = directory
        self.on_restored = on_restored
        self.workspace = workspace
        self.max_bytes = max_bytes
        self.current = current
        self._turns: dict[str, TurnCheckpoint] = {}
        self._sizes: dict[str, int] = {}
        """Stored blobs and their sizes."""
        self._load()

    # --- reading -------------------------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        """The file of records."""
        return self.directory / INDEX_NAME

    def _blob(self, digest: str) -> Path:
        return self.directory / BLOB_DIRECTORY / digest

    def _load(self) -> None:
        try:
            lines = self.index_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return
        except OSError as error:
            logger.warning("cannot read checkpoints %s: %s", self.index_path, error)
            return
        for line in lines:
            try:
                record = json.loads(line)
                self._apply(record)
            except (ValueError, KeyError, TypeError):
                logger.warning("checkpoints %s: skipped an unreadable line", self.index_path)
        for turn in self._turns.values():
            for change in turn.changes.values():
                if change.kept and change.before is not None:
                    try:
                        self._sizes[change.before] = self._blob(change.before).stat().st_size
                    except OSError:
                        change.kept = False  # the blob is gone: say so instead of guessing

    def _apply(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        if kind == "turn":
            self._turns.setdefault(
                record["turn"],
                TurnCheckpoint(record["turn"], str(record["title"]), float(record["created"])),
            )
        elif kind == "change":
            turn = self._turns[record["turn"]]
            path = str(record["path"])
            if "before" in record:
                turn.changes[path] = PathChange(
                    path, record["before"], record["before"], bool(record.get("kept", True))
                )
            if "after" in record and path in turn.changes:
                turn.changes[path].after = record["after"]
        elif kind == "undone":
            for turn_id in record["turns"]:
                if turn_id in self._turns:
                    self._turns[turn_id].undone = True
        elif kind == "dropped":
            turn = self._turns.setdefault(
                record["turn"],
                TurnCheckpoint(record["turn"], str(record["title"]), float(record["created"])),
            )
            turn.changes.clear()
            turn.dropped = True

    def turns(self) -> list[TurnCheckpoint]:
        """Every turn that changed files (or whose changes were dropped), oldest first."""
        return list(self._turns.values())

    def turn(self, turn_id: str) -> TurnCheckpoint | None:
        """The checkpoint of the turn whose user message is `turn_id`, if it changed files."""
        return self._turns.get(turn_id)

    @property
    def stored_bytes(self) -> int:
        """The size of the kept contents (what `max_bytes` bounds)."""
        return sum(self._sizes.values())

    # --- recording (FileChangeRecorder) --------------------------------------------------------
    def before_change(self, path: Path) -> None:
        """Keep `path`'s content (or its absence) if this is the turn's first change of it.

        Never raises: a checkpoint that cannot be written is logged, and the write goes on.
        """
        try:
            self._record_before(path)
        except (OSError, ValueError, ToolError) as error:
            logger.warning("could not record a checkpoint of %s: %s", path, error)

    def after_change(self, path: Path) -> None:
        """Note what Forge left at `path` (to tell a later edit by someone else)."""
        try:
            self._record_after(path)
        except (OSError, ValueError, ToolError) as error:
            logger.warning("could not record a checkpoint of %s: %s", path, error)

    def _record_before(self, path: Path) -> None:
        turn = self._turn_for_change()
        if turn is None:
            return
        relative = self._relative(path)
        if relative in turn.changes:
            return
        data = _read_state(path)
        digest = None if data is None else content_hash(data)
        kept = data is None or self._store_blob(digest or "", data, turn.turn)
        turn.changes[relative] = PathChange(relative, digest, digest, kept)
        self._append(
            {"type": "change", "turn": turn.turn, "path": relative, "before": digest}
            | ({} if kept else {"kept": False})
        )

    def _record_after(self, path: Path) -> None:
        turn = self._turn_for_change()
        if turn is None:
            return
        relative = self._relative(path)
        change = turn.changes.get(relative)
        if change is None:
            return
        data = _read_state(path)
        change.after = None if data is None else content_hash(data)
        self._append({"type": "change", "turn": turn.turn, "path": relative, "after": change.after})

    def _turn_for_change(self) -> TurnCheckpoint | None:
        info = self.current()
        if info is None:
            return None
        turn = self._turns.get(info.id)
        if turn is None or turn.dropped:
            title = redact(" ".join(info.text.split()))  # invariant 5: never a key on disk
            turn = TurnCheckpoint(info.id, title, info.created)
            self._turns.pop(info.id, None)
            self._turns[info.id] = turn
            self._append(
                {"type": "turn", "turn": turn.turn, "title": title, "created": info.created}
            )
        return turn

    def _relative(self, path: Path) -> str:
        root = workspace_root(self.workspace)
        return path.relative_to(root).as_posix()

    def _store_blob(self, digest: str, data: bytes, keep_turn: str) -> bool:
        """Store `data` under `digest` within the bound; False if it cannot fit at all."""
        if digest in self._sizes:
            return True
        if len(data) > self.max_bytes:
            return False
        self._make_room(len(data), keep_turn)
        if self.stored_bytes + len(data) > self.max_bytes:
            return False
        blob = self._blob(digest)
        ensure_dir(blob.parent)
        temporary = blob.with_name(blob.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, blob)
        except BaseException:  # a full disk, say: leave no partial file behind
            temporary.unlink(missing_ok=True)
            raise
        self._sizes[digest] = len(data)
        return True

    def _make_room(self, size: int, keep_turn: str) -> None:
        """Drop whole turns, oldest first (never `keep_turn`), until `size` more bytes fit."""
        dropped = False
        for turn in list(self._turns.values()):
            if self.stored_bytes + size <= self.max_bytes:
                break
            if turn.turn == keep_turn or turn.dropped:
                continue
            turn.changes.clear()
            turn.dropped = True
            dropped = True
            self._forget_unused_blobs()
        if dropped:
            self._rewrite_index()

    def _forget_unused_blobs(self) -> None:
        used = {
            change.before
            for turn in self._turns.values()
            for change in turn.changes.values()
            if change.kept and change.before is not None
        }
        for digest in list(self._sizes):
            if digest not in used:
                del self._sizes[digest]
                with contextlib.suppress(FileNotFoundError):
                    self._blob(digest).unlink()

    def _records(self) -> Iterable[dict[str, Any]]:
        undone: list[str] = []
        for turn in self._turns.values():
            head = {"turn": turn.turn, "title": turn.title, "created": turn.created}
            if turn.dropped:
                yield {"type": "dropped", **head}
                continue
            yield {"type": "turn", **head}
            for change in turn.changes.values():
                base = {"type": "change", "turn": turn.turn, "path": change.path}
                yield base | {"before": change.before} | ({} if change.kept else {"kept": False})
                yield base | {"after": change.after}
            if turn.undone:
                undone.append(turn.turn)
        if undone:
            yield {"type": "undone", "turns": undone}

    def _rewrite_index(self) -> None:
        ensure_dir(self.directory)
        temporary = self.index_path.with_name(INDEX_NAME + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record) + "\n" for record in self._records())
        os.replace(temporary, self.index_path)

    def _append(self, record: dict[str, Any]) -> None:
        ensure_dir(self.directory)
        descriptor = os.open(self.index_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
            handle.flush()

    # --- restoring -----------------------------------------------------------------------------
    def last_undoable(self) -> TurnCheckpoint | None:
        """The latest turn whose changes are kept and not undone yet."""
        for turn in reversed(self._turns.values()):
            if not turn.undone and not turn.dropped and turn.changes:
                return turn
        return None

    def plan_undo(self) -> RestorePlan | None:
        """Restoring the last turn that changed files, or None when there is none."""
        turn = self.last_undoable()
        return None if turn is None else self.plan([turn])

    def turns_since(self, created: float) -> list[TurnCheckpoint]:
        """Turns started at or after `created` (a user message's creation time) not undone."""
        return [
            turn
            for turn in self._turns.values()
            if turn.created >= created and not turn.undone and not turn.dropped
        ]

    def plan(self, turns: Sequence[TurnCheckpoint]) -> RestorePlan:
        """Put every path `turns` changed back as it was before the first of them changed it;
        Forge's last write is what is expected there now."""
        ordered = sorted(turns, key=list(self._turns.values()).index)
        earliest: dict[str, PathChange] = {}
        latest: dict[str, PathChange] = {}
        for turn in ordered:
            for path, change in turn.changes.items():
                earliest.setdefault(path, change)
                latest[path] = change
        files = []
        root = workspace_root(self.workspace)
        for path, first in earliest.items():
            data = _read_state(root / path)
            files.append(
                FileRestore(
                    path=path,
                    target=first.before,
                    expected=latest[path].after,
                    current=None if data is None else content_hash(data),
                    kept=first.kept,
                )
            )
        return RestorePlan(tuple(ordered), tuple(files))

    def apply(self, plan: RestorePlan, *, overwrite_conflicts: bool) -> RestoreOutcome:
        """Put the plan's files back (conflicting ones only with `overwrite_conflicts`) and
        mark its turns undone."""
        outcome = RestoreOutcome()
        for file in plan.files:
            if file.conflict and not overwrite_conflicts:
                outcome.skipped.append(file.path)
                continue
            try:
                path = self._restore(file)
            except (OSError, ToolError) as error:
                outcome.failed.append((file.path, str(error)))
                continue
            if self.on_restored is not None:
                self.on_restored(path)
            (outcome.removed if file.target is None else outcome.restored).append(file.path)
        for turn in plan.turns:
            turn.undone = True
        if plan.turns:
            try:
                self._append({"type": "undone", "turns": [turn.turn for turn in plan.turns]})
            except OSError as error:
                logger.warning("could not record an undo: %s", error)
        return outcome

    def _restore(self, file: FileRestore) -> Path:
        """Put `file` back; its resolved path."""
        path = resolve_in_workspace(self.workspace, file.path)  # invariant 6
        if not file.needed:
            return path
        if file.target is None:
            path.unlink(missing_ok=True)
            return path
        if not file.kept:
            raise ToolError("its earlier content was larger than checkpoints.max_bytes")
        data = self._blob(file.target).read_bytes()
        if content_hash(data) != file.target:
            raise ToolError("its stored earlier content is damaged")
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            handle.write(data)
        return path


def describe_outcome(outcome: RestoreOutcome, created: str = "created by that turn") -> str:
    """One readable paragraph: what was restored, removed, kept, or could not be put back.
    `created` says where removed files came from (e.g. "created since then")."""
    parts = []
    if outcome.restored:
        parts.append("Restored " + ", ".join(f"`{path}`" for path in outcome.restored) + ".")
    if outcome.removed:
        removed = ", ".join(f"`{path}`" for path in outcome.removed)
        parts.append(f"Removed {removed} ({created}).")
    if outcome.skipped:
        kept = ", ".join(f"`{path}`" for path in outcome.skipped)
        parts.append(f"Kept your edits to {kept} (not restored).")
    for path, why in outcome.failed:
        parts.append(f"Could not restore `{path}`: {why}.")
    return " ".join(parts) or "Nothing to restore."
