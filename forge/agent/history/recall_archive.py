"""The originals the `recall` tool gives back, read from the session file.

The session file holds every message as first appended (`message` records) and every message
later swapped in (`replace` records); a `rewind` record cuts the history back to before a turn.
`SessionArchive` reads the file incrementally — only the bytes appended since its last look —
and keeps, by id, each message as first recorded on the current line of history: so a masked,
pruned, cut or summarized output comes back word for word (secrets redacted as the file holds
them), after `--continue` too, while an output a /rewind removed is known to be gone.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from forge.agent.history.image_store import images_dir, with_images_loaded
from forge.llm.messages import Message

logger = logging.getLogger(__name__)


class RecallError(LookupError):
    """The id names no recallable message; the message says why."""


@dataclass(frozen=True, slots=True)
class Recalled:
    """An original message and its full id."""

    id: str
    message: Message


class SessionArchive:
    """Every message of one session file by id, as first recorded (see module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._known: dict[str, Message] = {}
        """Messages on the current line of history, in the order first recorded."""
        self._removed: set[str] = set()
        """Ids a /rewind removed from the history."""

    def find(self, key: str) -> Recalled:
        """The original named by `key` (a full id or its start); `RecallError` says why not."""
        key = key.strip()
        if not key:
            raise RecallError("give the id a placeholder names, e.g. recall 3f9a2c")
        self._refresh()
        message = self._known.get(key)
        if message is not None:
            return Recalled(key, with_images_loaded(images_dir(self.path), message))
        matches = [message_id for message_id in self._known if message_id.startswith(key)]
        if len(matches) == 1:
            found = self._known[matches[0]]
            return Recalled(matches[0], with_images_loaded(images_dir(self.path), found))
        if matches:
            raise RecallError(
                f"several outputs have ids starting with {key!r} ({', '.join(matches[:5])}); "
                "give more of the id"
            )
        if any(message_id.startswith(key) for message_id in self._removed):
            raise RecallError(
                f"the output {key!r} was removed from this conversation by /rewind; "
                "it cannot be recalled (run the tool again if you need it)"
            )
        raise RecallError(
            f"no output with id {key!r} in this session; use the id a placeholder names "
            "(e.g. `recall 3f9a2c`)"
        )

    def originals(self) -> list[Message]:
        """Every message on the current line of history, as first recorded, oldest first."""
        self._refresh()
        return list(self._known.values())

    # --- reading the file ------------------------------------------------------------------
    def _refresh(self) -> None:
        """Read the records appended since the last look."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return  # nothing recorded yet (no user message so far)
        except OSError as error:
            raise RecallError(f"could not read the session file: {error}") from None
        end = data.rfind(b"\n") + 1  # a torn last line waits for its end
        self._offset += end
        for line in data[:end].split(b"\n"):
            if line.strip():
                self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            record = json.loads(line.decode("utf-8", errors="replace"))
        except json.JSONDecodeError:
            return  # a torn line (a crash while writing): replay skips it too
        if not isinstance(record, dict):
            return
        kind = record.get("type")
        try:
            if kind == "message":
                self._keep(record["message"])
            elif kind == "replace":
                for item in record.get("inserted") or []:
                    self._keep(item)
            elif kind == "rewind":
                self._rewind(str(record["turn"]))
        except (KeyError, TypeError, ValueError) as error:
            logger.warning("recall: skipped a bad %s record in %s: %s", kind, self.path, error)

    def _keep(self, item: Any) -> None:
        if not isinstance(item, dict) or not item.get("id"):
            return
        message = Message.from_record(item)
        if message.id not in self._known:  # the first record is the original
            self._known[message.id] = message
            self._removed.discard(message.id)

    def _rewind(self, turn_id: str) -> None:
        """The history goes back to before the user message `turn_id`: it and every message
        first recorded after it are gone."""
        if turn_id not in self._known:
            return
        kept: dict[str, Message] = {}
        for message_id, message in self._known.items():
            if message_id == turn_id:
                break
            kept[message_id] = message
        self._removed.update(message_id for message_id in self._known if message_id not in kept)
        self._known = kept
