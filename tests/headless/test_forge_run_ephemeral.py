"""`forge run --ephemeral` leaves nothing behind (ADR 0015): HOME, every XDG directory and
TMPDIR point at temp dirs whose trees are compared before and after a real run that reads,
writes, runs a command and summarizes; the workspace changes only by what the task wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.agent.turn.test_loop_errors import OVERFLOW
from tests.headless.test_headless import API_KEY, REPO_ROOT, stream_json
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Reply, Text, ToolCalls


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under `root` with its size and modification time (ns)."""
    found = {}
    for path in root.rglob("*"):
        info = path.lstat()
        found[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns)
    return found


def run_in(
    server: OpenAIServer, workspace: Path, roots: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    environment = {
        key: value
        for key, value in os.environ.items()
        # tiktoken's own cache under $TMPDIR is on by default for users: keep it so here.
        if key != "TIKTOKEN_CACHE_DIR"
    }
    environment.update(
        PYTHONPATH=str(REPO_ROOT),
        PYTHONDONTWRITEBYTECODE="1",
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY=API_KEY,
        HOME=str(roots / "home"),
        XDG_CONFIG_HOME=str(roots / "config"),
        XDG_DATA_HOME=str(roots / "data"),
        XDG_STATE_HOME=str(roots / "state"),
        XDG_CACHE_HOME=str(roots / "cache"),
        TMPDIR=str(roots / "tmp"),
    )
    return subprocess.run(
        [sys.executable, "-m", "forge", "run", "--yes", *args],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=90,
    )


def script(server: OpenAIServer) -> None:
    replies: list[Reply] = [
        ToolCalls([Call("read_file", {"path": "big.txt"})]),
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "written\n"})]),
        ToolCalls([Call("execute_command", {"command": "echo ran > ran.txt"})]),
        OVERFLOW,  # the context manager summarizes (a summary archive, normally), then retries
        ToolCalls([Call("task_completion", {"result": "done"})]),
    ]

    def respond(request: RecordedRequest) -> Reply:
        if not request.tools:
            return Text("Summary: read, wrote, ran.")
        return replies.pop(0)

    server.responder = respond


def roots_in(base: Path) -> Path:
    for name in ("home", "config", "data", "state", "cache", "tmp"):
        (base / name).mkdir(parents=True)
    return base


def test_ephemeral_run_writes_nothing_outside_what_the_task_wrote(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    roots = roots_in(tmp_path / "roots")
    (workspace / "big.txt").write_text("line of text\n" * 200)
    before, workspace_before = tree(roots), tree(workspace)
    script(llm_server)

    run = run_in(llm_server, workspace, roots, "--ephemeral", "--output-format", "forge-jsonl", "t")

    assert run.returncode == 0, run.stderr
    records = stream_json(run)
    assert any(r["type"] == "summarization_completed" for r in records)
    assert tree(roots) == before
    after = tree(workspace)
    assert set(after) - set(workspace_before) == {"out.txt", "ran.txt"}
    assert {k: v for k, v in after.items() if k in workspace_before} == workspace_before


def test_the_same_run_without_ephemeral_writes_its_files(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    """The comparison above would see each artefact: without --ephemeral they are there."""
    roots = roots_in(tmp_path / "roots")
    (workspace / "big.txt").write_text("line of text\n" * 200)
    script(llm_server)

    run = run_in(llm_server, workspace, roots, "--output-format", "forge-jsonl", "t")

    assert run.returncode == 0, run.stderr
    written = set(tree(roots))
    sessions = roots / "data" / "forge" / "sessions"
    assert any(path.suffix == ".jsonl" for path in sessions.iterdir())  # the session
    assert list(sessions.glob("*.summaries/*.md"))  # the summary archive
    assert list(sessions.glob("*.checkpoints")) or any(".checkpoints" in p for p in written)
    assert "state/forge/forge.log" in written  # the log
    assert any(p.startswith("cache/forge/tiktoken") for p in written)  # the tokenizer cache
    assert not any(p.startswith("tmp/data-gym-cache") for p in written)  # no second copy (ADR 0042)
