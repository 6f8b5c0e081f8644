"""Canary keys through a whole `forge run`: in the config file, in the environment, and both
(the environment's overriding the file's). The model prints them with a command and reads
them from a file, the summarizer quotes them, and the provider's error echoes them; no
artefact — session file, summary files, log, stdout, stderr — may hold any of them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.turn.test_loop_errors import OVERFLOW
from tests.headless.test_headless import REPO_ROOT, jsonl
from tests.support.openai_server import Call, Fault, OpenAIServer, RecordedRequest, Text, ToolCalls

FILE_CANARY = "sk-canary-FILE-7f3a9c1e5b"
ENV_CANARY = "sk-canary-ENV-2d8b4f6a0c"
FORGE_ENV_CANARY = "sk-canary-FORGEENV-9e1c3a5f7b"
ANTHROPIC_CANARY = "sk-ant-canary-ANTHROPIC-4c2e8a"


def run_forge(
    server: OpenAIServer, workspace: Path, home: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)  # the conftest's isolated XDG directories
    environment.update(
        PYTHONPATH=str(REPO_ROOT), OPENAI_BASE_URL=server.base_url, FORGE_LLM__MAX_RETRIES="0"
    )
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "forge", "run", "--yes", "--output", "jsonl", "leak it"],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("in_file", "in_env"),
    [
        (FILE_CANARY, {}),
        (None, {"OPENAI_API_KEY": ENV_CANARY}),
        (FILE_CANARY, {"OPENAI_API_KEY": ENV_CANARY}),
        (FILE_CANARY, {"FORGE_LLM__API_KEY": FORGE_ENV_CANARY}),
        # Not the key in use (the server is OpenAI-compatible), but a known key all the same.
        (None, {"OPENAI_API_KEY": ENV_CANARY, "ANTHROPIC_API_KEY": ANTHROPIC_CANARY}),
    ],
    ids=["file", "environment", "both", "both-forge-variable", "anthropic-variable"],
)
def test_no_artefact_holds_a_canary(
    llm_server: OpenAIServer,
    workspace: Path,
    isolated_environment: Path,
    in_file: str | None,
    in_env: dict[str, str],
) -> None:
    canaries = [value for value in (in_file, *in_env.values()) if value]
    if in_file:
        config = isolated_environment / "config" / "forge" / "config.yaml"
        config.parent.mkdir(parents=True)
        config.write_text(f"llm:\n  api_key: {in_file}\n")
    # What `cat ~/.config/forge/config.yaml` and `env` would show the model.
    keys = "".join(f"key={value}\n" for value in canaries)
    (workspace / "leak.txt").write_text(keys + "line of text\n" * 200 + keys)
    quoted = " and ".join(canaries)
    replies: list[Any] = [
        ToolCalls([Call("execute_command", {"command": "cat leak.txt"})]),
        ToolCalls([Call("read_file", {"path": "leak.txt"})]),
        OVERFLOW,  # the context manager summarizes, then retries
        Fault(401, {"error": {"message": f"invalid key {quoted}"}}),
    ]

    def respond(request: RecordedRequest) -> Any:
        if not request.tools:  # a summarization request
            return Text(f"Summary: the model printed the keys {quoted}.")
        return replies.pop(0)

    llm_server.responder = respond
    result = run_forge(llm_server, workspace, isolated_environment, in_env)

    assert result.returncode == 1, result.stderr
    records = jsonl(result)
    assert any(r["type"] == "summarization_completed" for r in records), records
    assert any(r["type"] == "error" and r["kind"] == "authentication" for r in records)
    data = isolated_environment / "data" / "forge" / "sessions"
    summaries = list(data.glob("*.summaries/*.md"))
    sessions = list(data.glob("*.jsonl"))
    assert summaries and sessions
    # The canaries did reach the artefacts, as redaction marks.
    assert "[redacted]" in sessions[0].read_text()
    assert "[redacted]" in summaries[0].read_text()
    log = isolated_environment / "state" / "forge" / "forge.log"
    artefacts = [*sessions, *summaries, log]
    for canary in canaries:
        assert canary not in result.stdout and canary not in result.stderr, canary
        for path in artefacts:
            assert canary not in path.read_text(errors="replace"), (canary, path)
    # Nothing else Forge wrote (outside the user's own config file) holds one either.
    for path in isolated_environment.rglob("*"):
        if path.is_file() and "config" not in path.relative_to(isolated_environment).parts:
            text = path.read_text(errors="replace")
            assert not any(canary in text for canary in canaries), path
