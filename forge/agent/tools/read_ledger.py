"""What the model has seen of each file: the rule that `write_file` never overwrites a change
it has not read.

`read_file` records a digest of the whole file each time it reads one (any range); a
successful `write_file` or `apply_diff` records what it wrote. `write_file` then refuses to
replace an existing file unless its content is still the recorded one — the user may have
edited it, or a command may have rewritten it, since the model last looked. One ledger lives
as long as one tool registry, which is one session.

A file /undo or /rewind puts back is forgotten (`forget`), and a rewind of the conversation
forgets everything (`clear`): the model must read such files again before it writes them, and
is told why.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from forge.agent.tools.base import ToolError


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileReadLedger:
    """The content digest of each file as the model last saw it, by real path."""

    def __init__(self) -> None:
        self._seen: dict[Path, str] = {}
        self._restored: set[Path] = set()
        """Paths forgotten because /undo or /rewind put them back (for the refusal's words)."""

    def record(self, path: Path, data: bytes) -> None:
        """The model has now seen (read or written) `data` as the content of `path`."""
        self._seen[path] = _digest(data)
        self._restored.discard(path)

    def seen(self, path: Path) -> bool:
        """Whether the model has read or written `path` this session."""
        return path in self._seen

    def forget(self, path: Path) -> None:
        """`path` was put back by /undo or /rewind: what the model saw of it is out of date."""
        if self._seen.pop(path, None) is not None:
            self._restored.add(path)

    def clear(self) -> None:
        """The conversation was rewound: the model no longer holds anything it read."""
        self._seen.clear()
        self._restored.clear()

    def check_current(self, path: Path, shown: str, current: bytes | None) -> None:
        """Raise `ToolError` unless replacing `path` (now holding `current`, None if missing)
        loses nothing the model has not seen."""
        if current is None:
            return
        recorded = self._seen.get(path)
        if recorded is None and path in self._restored:
            raise ToolError(
                f"'{shown}' was restored to an earlier version by /undo or /rewind since you "
                "last read it; read it again with read_file, then write it. Nothing was written."
            )
        if recorded is None:
            raise ToolError(
                f"'{shown}' already exists and has not been read in this session; read it "
                "with read_file first, then write it (or change part of it with apply_diff). "
                "Nothing was written."
            )
        if recorded != _digest(current):
            raise ToolError(
                f"'{shown}' has changed since you last read it (the user or a command "
                "edited it, or /undo or /rewind restored it); read it again with read_file and "
                "redo your change on its current content. Nothing was written."
            )
