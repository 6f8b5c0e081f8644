"""`forge run` (a real subprocess) names an untrusted workspace's hooks file as not used, as it
does an untrusted `.forge/mcp.yaml`, and stops once the user trusts it (docs/adr/0034, 0043).
That the hooks then run: tests/headless/test_forge_run_hooks.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent.hooks.support import command_hook, write_project_hooks
from tests.headless.test_headless import REPO_ROOT, forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, ToolCalls


def test_forge_run_warns_about_an_untrusted_hooks_file_until_it_is_trusted(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"Stop": [command_hook("echo ran > FLAG")]}}))
    write_project_hooks(workspace, {"PreToolUse": [command_hook("./guard.sh", matcher="Bash")]})
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    result = forge_run(llm_server, workspace, "--output", "jsonl", "go")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(".forge/hooks.json not used: this workspace is not trusted") == 1
    assert "it would run PreToolUse hook (Bash): ./guard.sh" in result.stderr
    records = [r for r in jsonl(result) if r["type"] == "workspace_untrusted"]
    assert [(r["file"], r["programs"]) for r in records] == [
        (".forge/hooks.json", [{"name": "PreToolUse hook (Bash)", "command": "./guard.sh"}]),
        (".claude/settings.json", [{"name": "Stop hook", "command": "echo ran > FLAG"}]),
    ]

    trusted = subprocess.run(
        [sys.executable, "-m", "forge", "trust"],
        cwd=workspace,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert trusted.returncode == 0, trusted.stderr
    assert "PreToolUse hook (Bash): ./guard.sh" in trusted.stdout
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    again = forge_run(llm_server, workspace, "--output", "jsonl", "go")
    assert again.returncode == 0, again.stderr
    assert "not used" not in again.stderr
    assert not [r for r in jsonl(again) if r["type"] == "workspace_untrusted"]
