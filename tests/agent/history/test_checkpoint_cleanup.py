"""Checkpoint temporary files abandoned by a kill during a write are removed at start
(issue 20, docs/adr/0036); a fresh one (another Forge writing it now) and real blobs stay."""

from __future__ import annotations

import os
import time
from pathlib import Path

from forge.agent.history.checkpoint_cleanup import STALE_AFTER_SECONDS, remove_stale_temporaries
from forge.config.paths import sessions_dir
from tests.headless.test_headless import forge_run
from tests.support.openai_server import OpenAIServer, Text


def abandoned(path: Path, size: int = 1000, age: float = STALE_AFTER_SECONDS + 60) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_stale_temporaries_go_and_everything_else_stays(tmp_path: Path) -> None:
    blobs = tmp_path / "20260101-000000-abcdef.checkpoints" / "blobs"
    old_blob = abandoned(blobs / "0123abcd.tmp")
    old_index = abandoned(blobs.parent / "index.jsonl.tmp")
    fresh = abandoned(blobs / "4567cdef.tmp", age=1)
    real = abandoned(blobs / "89abcdef")
    elsewhere = abandoned(tmp_path / "notes.tmp")

    assert remove_stale_temporaries(tmp_path) == 2
    assert not old_blob.exists() and not old_index.exists()
    assert fresh.exists() and real.exists() and elsewhere.exists()
    assert remove_stale_temporaries(tmp_path / "missing") == 0


def test_forge_run_sweeps_every_sessions_checkpoint_directory(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    left = abandoned(sessions_dir() / "old-session.checkpoints" / "blobs" / "f00d.tmp", 2_000_000)
    llm_server.enqueue(Text("hello"))
    result = forge_run(llm_server, workspace, "hi")
    assert result.returncode == 0, result.stderr
    assert not left.exists()
