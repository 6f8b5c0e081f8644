"""`forge acp` judged by the official TypeScript ACP SDK (`check.mjs`, the editor).

Installs the SDK pinned in `package-lock.json` into this folder (`npm ci`; node_modules is
git-ignored; needs npm's registry, so this is not part of `make test`), starts the loopback
OpenAI-compatible server scripted for the scenario (turn 1 writes hello.txt, turn 2 reads it
back, turns 3 and 4 stream long answers that the editor cancels: with `session/cancel`, then
with the SDK's `$/cancel_request`; a second session plans, runs a command, is cancelled while
asking and fails on a server error; a last answer for the SDK's session helpers), makes a
temporary workspace and XDG directories, and runs `node check.mjs`, which spawns
`python -m forge acp` itself three times (the second process loads the session, the third is
driven by the SDK's session helpers). Prints check.mjs's PASS/FAIL table and this runner's own
rows, and forge's stderr on a failure; exits 1 when any row failed.

Run: `make acp-ts-check` (or `.venv/bin/python scripts/acp_ts_check/run_check.py`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.support.openai_server import (  # noqa: E402
    Call,
    OpenAIServer,
    ServerFault,
    Text,
    ToolCalls,
)

FIRST_ANSWER = "Created hello.txt for you."
SECOND_ANSWER = "The file says: hello from forge"
LONG_ANSWER = "word " * 400
"""Turns 3 and 4's answer: streamed slowly enough that the editor cancels it after its first
chunk."""

PLAN = [
    {"step": "Read the code", "status": "done"},
    {"step": "Run a command", "status": "in_progress"},
    {"step": "Report", "status": "pending"},
]


def install_sdk() -> None:
    """`npm ci` in this folder unless node_modules already matches the lockfile."""
    installed = HERE / "node_modules" / ".package-lock.json"
    lock = HERE / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True)


def scripted_server() -> OpenAIServer:
    server = OpenAIServer().start()
    server.enqueue(
        ToolCalls([Call("write_file", {"path": "hello.txt", "content": "hello from forge\n"})]),
        Text(FIRST_ANSWER),
        ToolCalls([Call("read_file", {"path": "hello.txt"})]),
        Text(SECOND_ANSWER),
        Text(LONG_ANSWER, chunk_size=5, chunk_delay=0.05),
        Text(LONG_ANSWER, chunk_size=5, chunk_delay=0.05),
        # Process 2's second session.
        ToolCalls(
            [
                Call("update_plan", {"plan": PLAN}),
                Call("execute_command", {"command": "echo first line; echo second line"}),
            ]
        ),
        Text("Ran it."),
        ToolCalls(
            [
                Call("write_file", {"path": "one.txt", "content": "1\n"}),
                Call("write_file", {"path": "two.txt", "content": "2\n"}),
            ]
        ),
        ServerFault(500),
        Text("Recovered."),
        Text("Hello from the helpers."),  # process 3
    )
    return server


def environment(server: OpenAIServer, root: Path, workspace: Path) -> dict[str, str]:
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("FORGE_"):
            del env[name]  # the developer's own Forge settings stay out of the check
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_CACHE_HOME=str(root / "cache"),
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="sk-acp-ts-check-0123456789",
        FORGE_LLM__MAX_RETRIES="0",
        PYTHONPATH=str(REPO_ROOT),
        FORGE_ACP_COMMAND=json.dumps([sys.executable, "-m", "forge", "acp"]),
        FORGE_ACP_WORKSPACE=str(workspace),
        FORGE_ACP_STDERR=str(root / "forge-stderr.log"),
    )
    return env


def main() -> int:
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("FAIL: node and npm are needed (Node 20 or later)")
        return 1
    try:
        install_sdk()
    except subprocess.CalledProcessError as error:
        print(f"FAIL: npm ci did not install the SDK: {error}")
        return 1
    server = scripted_server()
    root = Path(tempfile.mkdtemp(prefix="forge-acp-ts-check-"))
    workspace = root / "workspace"
    workspace.mkdir()
    try:
        result = subprocess.run(
            ["node", str(HERE / "check.mjs")],
            cwd=HERE,
            env=environment(server, root, workspace),
            timeout=600,
            check=False,
        )
        unused = server.pending
        print(
            f"{'PASS' if unused == 0 else 'FAIL'}  every scripted model reply was asked for"
            + (f"  — {unused} not asked for" if unused else "")
        )
        failed = result.returncode != 0 or unused
        stderr = root / "forge-stderr.log"
        if failed and stderr.exists() and stderr.read_text().strip():
            print("--- forge acp's stderr (last 3,000 characters) ---")
            print(stderr.read_text()[-3000:])
        return 1 if failed else 0
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
