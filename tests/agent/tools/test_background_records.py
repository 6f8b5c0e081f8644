"""The records file that outlives a crash (docs/adr/0057): the next start ends a background
command a dead Forge left running — only the very process recorded, never a reused pid."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge.agent.tools.background_records import (
    BackgroundRecords,
    RecordedCommand,
    process_start_time,
    reap_stale,
    take_resumed,
)
from forge.agent.tools.process_groups import group_alive


@pytest.fixture
def orphan() -> Iterator[subprocess.Popen[bytes]]:
    """A process group a dead Forge would have left (its own session, still running)."""
    process = subprocess.Popen(["sleep", "1000"], start_new_session=True)
    yield process
    process.kill()
    process.wait()


def dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def write_as_dead_owner(records: BackgroundRecords, commands: list[RecordedCommand]) -> None:
    records.write(commands)
    record = json.loads(records.path.read_text())
    record["owner"] = dead_pid()
    records.path.write_text(json.dumps(record))


def test_the_next_start_ends_what_a_dead_forge_left_and_says_which(
    tmp_path: Path, orphan: subprocess.Popen[bytes]
) -> None:
    records = BackgroundRecords("session-1", tmp_path)
    write_as_dead_owner(records, [RecordedCommand("bg1", "sleep 1000", orphan.pid, 0.0)])

    (stale,) = reap_stale(tmp_path)
    assert stale.killed == ("bg1",)
    assert "bg1 `sleep 1000`" in stale.describe() and "ended now: bg1" in stale.describe()
    orphan.wait(timeout=30)
    assert not group_alive(orphan.pid)
    assert reap_stale(tmp_path) == []  # reported once
    assert [command.id for command in take_resumed("session-1", tmp_path)] == ["bg1"]
    assert not records.path.exists()


def test_a_reused_pid_is_never_signalled(tmp_path: Path, orphan: subprocess.Popen[bytes]) -> None:
    start = process_start_time(orphan.pid)
    assert start is not None
    records = BackgroundRecords("session-2", tmp_path)
    command = RecordedCommand("bg1", "sleep 1000", orphan.pid, 0.0, leader_start=start + 1)
    write_as_dead_owner(records, [command])
    (stale,) = reap_stale(tmp_path)
    assert stale.killed == ()
    assert orphan.poll() is None


def test_a_live_owners_records_are_left_alone(
    tmp_path: Path, orphan: subprocess.Popen[bytes]
) -> None:
    records = BackgroundRecords("session-3", tmp_path)
    records.write([RecordedCommand("bg1", "sleep 1000", orphan.pid, 0.0)])
    assert reap_stale(tmp_path) == []
    assert take_resumed("session-3", tmp_path) == []
    assert orphan.poll() is None
