"""`forge acp` with stdin or stdout redirected to a regular file (`forge acp > log.jsonl`,
`forge acp < requests.jsonl`): asyncio refuses pipe transports for a regular file, so the
SDK's stdio streams died at start; Forge serves them directly (forge/acp/stdio_files.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.acp.conftest import forge_environment
from tests.support.openai_server import OpenAIServer

REQUESTS = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
    {"jsonrpc": "2.0", "id": 2, "params": {}},
]


def answers(path: Path) -> dict[object, dict[str, object]]:
    return {message["id"]: message for message in map(json.loads, path.read_text().splitlines())}


def test_forge_acp_serves_a_file_on_stdout_and_on_stdin(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in REQUESTS))
    environment = forge_environment(llm_server)
    command = [sys.executable, "-m", "forge", "acp"]
    # stdin a file, stdout a file.
    both = tmp_path / "both.jsonl"
    with requests.open("rb") as stdin, both.open("wb") as stdout:
        finished = subprocess.run(
            command, stdin=stdin, stdout=stdout, cwd=workspace, env=environment, timeout=60
        )
    assert finished.returncode == 0
    # stdin a pipe, stdout a file.
    piped = tmp_path / "piped.jsonl"
    with piped.open("wb") as stdout:
        finished = subprocess.run(
            command,
            input=requests.read_bytes(),
            stdout=stdout,
            cwd=workspace,
            env=environment,
            timeout=60,
        )
    assert finished.returncode == 0
    for output in (both, piped):
        replies = answers(output)
        assert replies[1]["result"]["protocolVersion"] == 1  # type: ignore[index]
        assert replies[2]["error"]["code"] == -32600  # type: ignore[index]
