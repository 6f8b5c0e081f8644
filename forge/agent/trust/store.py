"""The user's trust decisions, one per absolute workspace path, in the state directory.

`$XDG_STATE_HOME/forge/trust.json`, written atomically with mode 0600 under an advisory lock
(several Forge processes may decide at once). A file that cannot be read or parsed means
"no decision" for every workspace, with a warning: never a crash. Before such a file is
replaced, it is kept beside the store as `trust.json.bad`, so nothing is lost silently.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from forge.config.atomic import atomic_write_bytes
from forge.config.ephemeral import is_ephemeral
from forge.config.file_lock import locked
from forge.config.paths import ensure_dir, state_dir

logger = logging.getLogger(__name__)

TRUST_FILE_NAME = "trust.json"
STORE_VERSION = 1

Decision = Literal["trusted", "never"]


def trust_store_path() -> Path:
    """Where trust decisions are kept: `state_dir()/trust.json`."""
    return state_dir() / TRUST_FILE_NAME


@dataclass(frozen=True)
class TrustRecord:
    """The user's decision for one workspace."""

    decision: Decision
    """"trusted" (the definitions fingerprinted in `fingerprints` may run) or "never"."""
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    """For "trusted": each defining file (workspace-relative) and its fingerprint then."""
    decided_at: str = ""
    """When (ISO 8601, UTC)."""
    programs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """For "trusted": per file, each program's name and the digest of its command line then
    (`program_digest`): a re-ask after a restart marks what is new or changed since."""

    def to_dict(self) -> dict[str, Any]:
        """The record as stored."""
        stored: dict[str, Any] = {
            "decision": self.decision,
            "fingerprints": dict(self.fingerprints),
            "decided_at": self.decided_at,
        }
        if self.programs:
            stored["programs"] = {file: dict(names) for file, names in self.programs.items()}
        return stored


def _record_from(raw: Any) -> TrustRecord | None:
    """A stored record, or None when it is not one (that workspace counts as undecided)."""
    if not isinstance(raw, dict) or raw.get("decision") not in ("trusted", "never"):
        return None
    fingerprints = raw.get("fingerprints", {})
    if not isinstance(fingerprints, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in fingerprints.items()
    ):
        return None
    decided_at = raw.get("decided_at", "")
    when = decided_at if isinstance(decided_at, str) else ""
    return TrustRecord(raw["decision"], fingerprints, when, _programs_from(raw.get("programs")))


def _programs_from(raw: Any) -> dict[str, dict[str, str]]:
    """The stored program digests, per file; what is not of their shape is left out (a record
    written before them has none: a re-ask then marks nothing)."""
    programs: dict[str, dict[str, str]] = {}
    for file, names in raw.items() if isinstance(raw, dict) else ():
        if isinstance(file, str) and isinstance(names, dict):
            programs[file] = {
                k: v for k, v in names.items() if isinstance(k, str) and isinstance(v, str)
            }
    return programs


def workspace_key(workspace: Path) -> str:
    """The store's key for `workspace`: its absolute real path."""
    return str(workspace.expanduser().resolve())


class TrustStore:
    """Reads and writes the trust decisions. Every read goes to the file, so a decision made
    elsewhere (`forge trust` in another shell) counts from the next check on."""

    def __init__(self, path: Path | None = None) -> None:
        """The store at `path` (default `trust_store_path()`)."""
        self.path = path or trust_store_path()
        self.problem = ""
        """Why the last read found no usable store ("" when it was fine or absent)."""

    def _read(self) -> tuple[dict[str, Any], bool]:
        """The stored workspaces, and whether the file is damaged (unreadable or invalid)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.problem = ""
            return {}, False
        except (OSError, UnicodeDecodeError) as error:
            return self._damaged(f"cannot read {self.path}: {_describe(error)}")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            where = f"{error.msg}, line {error.lineno}"
            return self._damaged(f"{self.path} is not valid JSON ({where})")
        workspaces = data.get("workspaces") if isinstance(data, dict) else None
        if not isinstance(workspaces, dict):
            return self._damaged(f"{self.path} has no `workspaces` map")
        self.problem = ""
        return workspaces, False

    def _damaged(self, problem: str) -> tuple[dict[str, Any], bool]:
        self.problem = (
            f"the workspace trust store cannot be used: {problem}; every workspace counts as "
            "not trusted"
        )
        logger.info("%s", self.problem)  # the callers say it where the user looks
        return {}, True

    def get(self, workspace: Path) -> TrustRecord | None:
        """The decision for `workspace`, or None (undecided, or the store is unusable: then
        `problem` says why)."""
        workspaces, _damaged = self._read()
        return _record_from(workspaces.get(workspace_key(workspace)))

    def set(
        self,
        workspace: Path,
        decision: Decision,
        fingerprints: Mapping[str, str],
        programs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> None:
        """Record `decision` for `workspace` (replacing any earlier one). Raises OSError when
        the store cannot be written."""
        record = TrustRecord(decision, dict(fingerprints), _now(), dict(programs or {}))
        self._change(workspace_key(workspace), record)

    def forget(self, workspace: Path) -> bool:
        """Remove the decision for `workspace`; whether there was one."""
        key = workspace_key(workspace)
        if key not in self._read()[0]:
            return False
        self._change(key, None)
        return True

    def _change(self, key: str, record: TrustRecord | None) -> None:
        if is_ephemeral():  # `forge run --ephemeral` writes nothing that outlives it
            return
        ensure_dir(self.path.parent)
        with locked(self.path):
            workspaces, damaged = self._read()
            if damaged:
                self._keep_damaged_copy()
            if record is None:
                workspaces.pop(key, None)
            else:
                workspaces[key] = record.to_dict()
            content = {"version": STORE_VERSION, "workspaces": workspaces}
            text = json.dumps(content, indent=2, sort_keys=True) + "\n"
            atomic_write_bytes(self.path, text.encode("utf-8"), mode=0o600)
        self.problem = ""

    def _keep_damaged_copy(self) -> None:
        """Keep the unusable file as `trust.json.bad` before it is replaced."""
        backup = self.path.with_name(self.path.name + ".bad")
        try:
            os.replace(self.path, backup)
        except OSError:
            logger.warning("could not keep the damaged trust store as %s", backup)
        else:
            logger.info("the damaged trust store was kept as %s", backup)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
