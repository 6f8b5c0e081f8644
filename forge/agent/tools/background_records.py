"""The file that outlives a crash: which background commands a session had running.

One small JSON file per session, `state_dir()/background/SESSION.json`, rewritten (atomically)
whenever one of its background commands starts or ends: the owning Forge's pid and start time,
and each running command's id, text and process group (with the group leader's start time, so
a reused pid is never signalled). When the session ends cleanly the file keeps the commands it
ended (for the resumed session to name) and is marked closed; when Forge dies first it still
says "running".

At the next start, `reap_stale` finds the files whose owner is gone but which say running,
SIGKILLs any group still alive (the process-group watchdog of docs/adr/0021 normally got there
first) and reports them; `take_resumed` hands a resumed session the commands it had running
when it stopped (they are not restarted) and removes its file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

from forge.agent.tools.process_groups import group_alive
from forge.config.atomic import atomic_write_bytes
from forge.config.paths import state_dir


@dataclass(frozen=True, slots=True)
class RecordedCommand:
    """A background command as the records file names it."""

    id: str
    command: str
    group: int
    started: float
    leader_start: int | None = None


@dataclass(frozen=True, slots=True)
class StaleRecord:
    """A session whose Forge died with background commands running: the commands, and the
    ids of those whose processes were still alive and were killed now."""

    session_id: str
    commands: tuple[RecordedCommand, ...]
    killed: tuple[str, ...]

    def describe(self) -> str:
        """One sentence for the user."""
        names = ", ".join(f"{command.id} `{command.command}`" for command in self.commands)
        killed = f"; ended now: {', '.join(self.killed)}" if self.killed else ""
        return (
            f"A Forge that stopped without ending them left background commands of session "
            f"{self.session_id[:8]}: {names}{killed}."
        )


def records_dir() -> Path:
    """Where the records live: `state_dir()/background`."""
    return state_dir() / "background"


def process_start_time(pid: int) -> int | None:
    """The start time of process `pid` in clock ticks since boot (/proc), None if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


class BackgroundRecords:
    """The records file of one session (owned by this process)."""

    def __init__(self, session_id: str, directory: Path | None = None) -> None:
        self.session_id = session_id
        self.directory = directory if directory is not None else records_dir()
        self.path = self.directory / f"{session_id}.json"

    def write(self, commands: list[RecordedCommand]) -> None:
        """Name `commands` as running now (the file goes when none runs)."""
        if not commands:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        self._write("running", commands)

    def closed(self, commands: list[RecordedCommand], reason: str) -> None:
        """The session ended (`reason`) after ending `commands`: keep their names for its
        resume; no file when none was running."""
        with contextlib.suppress(OSError):
            if commands:
                self._write("closed", commands, reason)
            else:
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()

    def _write(self, state: str, commands: list[RecordedCommand], reason: str = "") -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        own = os.getpid()
        record = {
            "state": state,
            "reason": reason,
            "owner": own,
            "owner_start": process_start_time(own),
            "commands": [
                asdict(command)
                | {"leader_start": command.leader_start or process_start_time(command.group)}
                for command in commands
            ],
        }
        atomic_write_bytes(self.path, json.dumps(record).encode())


def reap_stale(directory: Path | None = None) -> list[StaleRecord]:
    """End what Forges that died left running (see the module docstring); one report per
    session. Each file is then marked closed ("crash"), for that session's resume."""
    directory = directory if directory is not None else records_dir()
    reports: list[StaleRecord] = []
    with contextlib.suppress(OSError):
        for path in sorted(directory.glob("*.json")):
            record = _read(path)
            if record is None or record.get("state") != "running" or _owner_alive(record):
                continue
            commands = _commands(record)
            killed = tuple(command.id for command in commands if _kill_if_same(command))
            reports.append(StaleRecord(path.stem, tuple(commands), killed))
            record["state"], record["reason"] = "closed", "crash"
            with contextlib.suppress(OSError):
                atomic_write_bytes(path, json.dumps(record).encode())
    return reports


def take_resumed(session_id: str, directory: Path | None = None) -> list[RecordedCommand]:
    """The background commands session `session_id` had running when it stopped (its file
    closed, by an exit or a crash found by `reap_stale`); the file is removed."""
    directory = directory if directory is not None else records_dir()
    path = directory / f"{session_id}.json"
    record = _read(path)
    if record is None or (record.get("state") == "running" and _owner_alive(record)):
        return []
    with contextlib.suppress(OSError):
        path.unlink()
    return _commands(record)


def _read(path: Path) -> dict[str, object] | None:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def _commands(record: dict[str, object]) -> list[RecordedCommand]:
    commands: list[RecordedCommand] = []
    raw = record.get("commands")
    for item in raw if isinstance(raw, list) else []:
        with contextlib.suppress(TypeError, ValueError):
            commands.append(RecordedCommand(**item))
    return commands


def _owner_alive(record: dict[str, object]) -> bool:
    owner = record.get("owner")
    if not isinstance(owner, int):
        return False
    start = process_start_time(owner)
    return start is not None and start == record.get("owner_start")


def _kill_if_same(command: RecordedCommand) -> bool:
    """SIGKILL the command's group if its leader is the very process that was recorded, or
    is gone while the group lives on (a pid still in use as a group id is not reused)."""
    start = process_start_time(command.group)
    if start is None:
        if not group_alive(command.group):
            return False
    elif command.leader_start is None or start != command.leader_start:
        return False
    try:
        os.killpg(command.group, signal.SIGKILL)
    except OSError:
        return False
    return True
