"""The interrupt section's pieces (bench/interrupt.py): the session it writes resumes, and a
measured interrupt is a real SIGTERM of a real `forge run` (no time is asserted)."""

from __future__ import annotations

from pathlib import Path

from bench.interrupt import environment_for, interrupt_seconds, no_boundary_text, write_session
from bench.server_process import ServerProcess
from forge.agent.history.session_file import SessionStore


def test_the_texts_have_no_boundary_where_promised() -> None:
    text = no_boundary_text()
    assert len(text) == 50_000_000 and set(text) == {"x"}


def test_a_small_session_is_written_resumed_and_interrupted(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    write_session(tmp_path, workspace, "hello " * 100)
    store = SessionStore(tmp_path / "data" / "forge" / "sessions")
    (info,) = store.list_sessions(workspace)
    assert [m.role for m in store.load(info.id)] == ["user", "assistant"]
    with ServerProcess("summarizer", latency=30.0) as server:
        seconds = interrupt_seconds(
            environment_for(tmp_path, server.base_url), workspace, "run_started"
        )
    assert seconds > 0
