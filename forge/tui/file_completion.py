"""Completion of `@path` mentions in the prompt: the workspace's file index and fuzzy ranking.

The index is the workspace's files as `list_files` sees them (`.git` and what `.gitignore`
ignores are skipped, by the same `walk`), built in a thread the first time `@` is typed and
rebuilt in the background once it is older than `INDEX_MAX_AGE` seconds; at most
`MAX_INDEX_FILES` files are indexed, so a huge tree costs a bounded walk. Nothing here touches
a widget. See docs/adr/0030-mentions-and-shell-escapes.md.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Sequence
from pathlib import Path

MAX_INDEX_FILES = 20_000
"""Files indexed before the walk stops (the hints then say the index is partial)."""
INDEX_MAX_AGE = 30.0
"""Seconds after which typing `@` rebuilds the index in the background (files come and go)."""
MAX_CANDIDATES = 8
"""Candidates shown at once."""
_OPENERS = "([{"


class FileIndex:
    """The workspace's (not ignored) files, relative POSIX paths, built by `build` in a thread."""

    def __init__(self, workspace: Path, *, max_files: int = MAX_INDEX_FILES) -> None:
        self.workspace = workspace
        self.max_files = max_files
        self.files: tuple[str, ...] = ()
        self.truncated = False
        """The walk stopped at `max_files`."""
        self.built_at: float | None = None
        self._building = threading.Lock()

    @property
    def ready(self) -> bool:
        """Built at least once."""
        return self.built_at is not None

    def needs_build(self, now: float | None = None) -> bool:
        """Never built, or older than `INDEX_MAX_AGE`, and no build running."""
        if self._building.locked():
            return False
        if self.built_at is None:
            return True
        return (time.monotonic() if now is None else now) - self.built_at > INDEX_MAX_AGE

    def build(self) -> None:
        """Walk the workspace (blocking: run it in a thread). A build already running makes
        this one return at once."""
        if not self._building.acquire(blocking=False):
            return
        try:
            from forge.session.workspace_files import walk

            files: list[str] = []
            truncated = False
            try:
                root = self.workspace.resolve(strict=True)
            except OSError:
                root = None
            if root is not None:
                for entry in walk(root, root, recursive=True):
                    if entry.is_directory:
                        continue
                    if len(files) >= self.max_files:
                        truncated = True
                        break
                    files.append(entry.relative.as_posix())
            self.files, self.truncated = tuple(files), truncated
            self.built_at = time.monotonic()
        finally:
            self._building.release()


def mention_at(line: str, column: int) -> tuple[int, str] | None:
    """The mention being typed when the cursor is at `column` of `line`: the column of its `@`
    and what follows it so far (without an opening quote). None when the cursor is not in a
    mention: no `@` at a word start, whitespace after it (unquoted), or a closed quote."""
    before = line[:column]
    at = before.rfind("@")
    if at < 0:
        return None
    if at > 0 and not (before[at - 1].isspace() or before[at - 1] in _OPENERS):
        return None  # an e-mail address, or an escaped \@
    typed = before[at + 1 :]
    if typed.startswith('"'):
        query = typed[1:]
        return None if '"' in query else (at, query)
    if any(character.isspace() for character in typed) or '"' in typed:
        return None
    return at, typed


AGENT_MENTION_PREFIX = "agent-"
"""`@agent-<name>` asks for a subagent (docs/adr/0045); completion offers the agents."""


def agent_completions(query: str, names: Sequence[str]) -> list[str]:
    """For a mention typed as `@<query>`: `agent-<name>` for each agent whose mention starts
    with it, once the query starts with `agent-` or is a start of it (nothing for "")."""
    if not query or not (
        query.startswith(AGENT_MENTION_PREFIX) or AGENT_MENTION_PREFIX.startswith(query)
    ):
        return []
    wanted = query[len(AGENT_MENTION_PREFIX) :] if query.startswith(AGENT_MENTION_PREFIX) else ""
    return [f"{AGENT_MENTION_PREFIX}{name}" for name in sorted(names) if name.startswith(wanted)]


def completion_for(path: str) -> str:
    """What replaces the typed mention: `@path ` (quoted when the path has whitespace)."""
    if any(character.isspace() for character in path):
        return f'@"{path}" '
    return f"@{path} "


def fuzzy_rank(query: str, files: tuple[str, ...], limit: int = MAX_CANDIDATES) -> list[str]:
    """The best `limit` files for `query`, best first.

    A match in the file name beats one elsewhere in the path, a contiguous match beats a
    scattered one (the query's characters in order, as in fzf), an earlier and a shorter path
    wins ties. Case is ignored. An empty query lists the shallowest files.
    """
    if not query:
        return heapq.nsmallest(limit, files, key=lambda path: (path.count("/"), len(path), path))
    needle = query.lower()
    first = needle[0]
    scored: list[tuple[float, int, str]] = []
    for path in files:
        lowered = path.lower()
        if first not in lowered:
            continue
        score = _score(needle, lowered)
        if score is not None:
            scored.append((score, -len(path), path))
    best = heapq.nlargest(limit, scored, key=lambda item: (item[0], item[1]))
    return [path for _, _, path in best]


def _score(needle: str, path: str) -> float | None:
    name_start = path.rfind("/") + 1
    found = path.find(needle, name_start)
    if found >= 0:
        return 3000.0 - (found - name_start) * 10 - len(path)
    found = path.find(needle)
    if found >= 0:
        return 2000.0 - found - len(path)
    # Subsequence: every query character in order; fewer and smaller gaps score higher.
    position = -1
    gaps = 0.0
    for character in needle:
        next_position = path.find(character, position + 1)
        if next_position < 0:
            return None
        if position >= 0 and next_position != position + 1:
            gaps += 1 + min(next_position - position, 10) / 10
        position = next_position
    return 1000.0 - gaps * 20 - len(path)
