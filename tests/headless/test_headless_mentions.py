"""`forge run "task with @file"` as a real subprocess attaches the file to the task."""

from __future__ import annotations

from pathlib import Path

from tests.headless.test_headless import forge_run, jsonl
from tests.support.openai_server import OpenAIServer, Text


def test_forge_run_attaches_mentioned_files(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(
        "".join(f"def f{n}(): pass\n" for n in range(1, 31)), encoding="utf-8"
    )
    (workspace / "notes file.md").write_text("remember the milk\n", encoding="utf-8")
    llm_server.enqueue(Text("Reviewed."))
    result = forge_run(
        llm_server,
        workspace,
        "--output",
        "jsonl",
        'review @src/app.py:10-12 with @"notes file.md", not @gone.py; mail a@b.com',
    )
    assert result.returncode == 0, result.stderr
    sent = llm_server.requests[0].messages[-1]["content"]
    assert sent.startswith(
        'review @src/app.py:10-12 with @"notes file.md", not @gone.py; mail a@b.com\n\n'
    )
    assert '<attached_file path="src/app.py" lines="10-12" total_lines="30">' in sent
    assert "10 | def f10(): pass\n11 | def f11(): pass\n12 | def f12(): pass\n" in sent
    assert "def f13" not in sent
    assert '<attached_file path="notes file.md" lines="1-1" total_lines="1">' in sent
    assert "remember the milk" in sent
    assert "forge run: attached src/app.py (lines 10-12, " in result.stderr
    assert "forge run: attached notes file.md (1 line, " in result.stderr
    assert "forge run: warning: @gone.py not attached: no file 'gone.py'" in result.stderr
    assert jsonl(result)[-1]["type"] == "turn_finished"


def test_forge_run_refuses_a_file_outside_the_workspace(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret.txt").write_text("top secret\n", encoding="utf-8")
    llm_server.enqueue(Text("Ok."))
    result = forge_run(llm_server, workspace, "read @../secret.txt")
    assert result.returncode == 0, result.stderr
    assert llm_server.requests[0].messages[-1]["content"] == "read @../secret.txt"
    assert "@../secret.txt not attached: path '../secret.txt' is outside the workspace" in (
        result.stderr
    )
