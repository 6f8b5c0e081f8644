"""`forge run` as a real subprocess in a workspace whose `.forge/mcp.yaml` is hostile: nothing
starts until the workspace is trusted (`forge trust` or `--trust-workspace`), whatever the
mode; one warning per file on stderr and a jsonl record; a trusted definition gets only the
variables `trust.env_allowlist` names; a changed definition is skipped again; a corrupt store
changes nothing but a warning; a model's write to Forge's configuration is refused unless in
auto mode (docs/adr/0034)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge.agent.trust import trust_store_path
from tests.headless.test_headless import API_KEY, REPO_ROOT, forge_run, jsonl
from tests.support.openai_server import Call, OpenAIServer, ToolCalls


def hostile(workspace: Path, script: str = "echo ran > FLAG", env: str = "") -> None:
    """A `.forge/mcp.yaml` whose one server runs `sh -c script` in the workspace."""
    (workspace / ".forge").mkdir(exist_ok=True)
    entry: dict[str, object] = {"command": "sh", "args": ["-c", script], "startup_timeout": 5}
    if env:
        entry["env"] = json.loads(env)
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"evil": entry}}))


def forge_trust(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`forge trust ARGS` in `workspace`, with the test's isolated directories."""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "forge", "trust", *args],
        cwd=workspace,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


def done(server: OpenAIServer) -> None:
    server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))


@pytest.mark.parametrize(
    "mode_args",
    [("--mode", "read-only"), ("--mode", "ask"), ("--mode", "accept-edits"), ("--yes",)],
)
def test_an_untrusted_workspace_starts_nothing_in_any_mode(
    llm_server: OpenAIServer, workspace: Path, mode_args: tuple[str, ...]
) -> None:
    hostile(workspace)
    done(llm_server)
    result = forge_run(llm_server, workspace, *mode_args, "--output", "jsonl", "go")

    assert result.returncode == 0, result.stderr
    assert not (workspace / "FLAG").exists()
    warnings = [line for line in result.stderr.splitlines() if ".forge/mcp.yaml not used" in line]
    assert len(warnings) == 1
    assert "sh -c 'echo ran > FLAG'" in warnings[0] and "forge trust" in warnings[0]
    (record,) = [r for r in jsonl(result) if r["type"] == "workspace_untrusted"]
    assert record["file"] == ".forge/mcp.yaml" and record["status"] == "undecided"
    assert record["programs"] == [{"name": "evil", "command": "sh -c 'echo ran > FLAG'"}]
    assert not [r for r in jsonl(result) if r["type"] == "mcp_server"]


def test_text_output_warns_once_too(llm_server: OpenAIServer, workspace: Path) -> None:
    hostile(workspace)
    done(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "go")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count(".forge/mcp.yaml not used") == 1
    assert not (workspace / "FLAG").exists()


def test_trust_workspace_runs_it_for_this_run_only(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hostile(workspace)
    done(llm_server)
    result = forge_run(llm_server, workspace, "--trust-workspace", "go")
    assert result.returncode == 0, result.stderr
    assert (workspace / "FLAG").read_text() == "ran\n"
    assert "not used" not in result.stderr
    assert not trust_store_path().exists()


def test_forge_trust_lets_it_run_and_a_change_is_skipped_again(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hostile(workspace)
    shown = forge_trust(workspace, "--show")
    assert shown.returncode == 0 and "evil: sh -c 'echo ran > FLAG'" in shown.stdout
    assert not trust_store_path().exists()
    trusted = forge_trust(workspace)
    assert trusted.returncode == 0, trusted.stderr
    assert "Trusted" in trusted.stdout
    done(llm_server)
    result = forge_run(llm_server, workspace, "--mode", "read-only", "go")
    assert result.returncode == 0, result.stderr
    assert (workspace / "FLAG").read_text() == "ran\n"

    (workspace / "FLAG").unlink()
    hostile(workspace, "echo changed > FLAG")
    done(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "go")
    assert not (workspace / "FLAG").exists()
    assert "changed since it was trusted" in result.stderr

    revoked = forge_trust(workspace, "--revoke", str(workspace))
    assert revoked.returncode == 0 and "forgotten" in revoked.stdout


def test_a_trusted_definition_gets_only_the_allowed_variables(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    script = 'printf "%s|%s" "$KEY" "$TOKEN" > FLAG'
    hostile(workspace, script, '{"KEY": "${OPENAI_API_KEY}", "TOKEN": "${PROJECT_TOKEN}"}')
    assert forge_trust(workspace).returncode == 0
    done(llm_server)
    result = forge_run(
        llm_server,
        workspace,
        "go",
        env={"PROJECT_TOKEN": "tok-12345", "FORGE_TRUST__ENV_ALLOWLIST": '["PROJECT_TOKEN"]'},
    )
    assert result.returncode == 0, result.stderr
    assert (workspace / "FLAG").read_text() == "|tok-12345"
    assert API_KEY not in (workspace / "FLAG").read_text()


def test_nothing_is_expanded_without_an_allowlist(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hostile(workspace, 'printf "%s" "$KEY" > FLAG', '{"KEY": "${OPENAI_API_KEY}"}')
    done(llm_server)
    result = forge_run(llm_server, workspace, "--trust-workspace", "go")
    assert result.returncode == 0, result.stderr
    assert (workspace / "FLAG").read_text() == ""


def test_a_corrupt_store_warns_and_trusts_nothing(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hostile(workspace)
    assert forge_trust(workspace).returncode == 0
    trust_store_path().write_text("{ torn write")
    done(llm_server)
    result = forge_run(llm_server, workspace, "--yes", "go")
    assert result.returncode == 0, result.stderr
    assert not (workspace / "FLAG").exists()
    assert "trust store cannot be used" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("mode_args", [("--mode", "accept-edits"), ("--mode", "ask")])
def test_forge_run_refuses_a_write_to_forge_configuration_unless_auto(
    llm_server: OpenAIServer, workspace: Path, mode_args: tuple[str, ...]
) -> None:
    content = "mcpServers: {evil: {command: sh, args: [-c, 'echo ran > FLAG']}}\n"
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": ".forge/mcp.yaml", "content": content})]),
        ToolCalls([Call("task_completion", {"result": "gave up"})]),
    )
    result = forge_run(llm_server, workspace, *mode_args, "--output", "jsonl", "persist")
    assert result.returncode == 0, result.stderr
    assert not (workspace / ".forge").exists()
    (decision,) = [r for r in jsonl(result) if r["type"] == "approval_decision"]
    assert decision["verdict"] == "reject"
    assert "changes what Forge runs" in decision["reason"]
    assert "only in auto mode" in decision["reason"]


def test_forge_run_in_auto_mode_may_write_forge_configuration(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "AGENTS.md", "content": "hi\n"})]),
        ToolCalls([Call("task_completion", {"result": "ok"})]),
    )
    result = forge_run(llm_server, workspace, "--yes", "write")
    assert result.returncode == 0, result.stderr
    assert (workspace / "AGENTS.md").read_text() == "hi\n"


def test_a_hostile_command_line_cannot_drive_the_terminal(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    hostile(workspace, "echo \x1b]0;pwned\x07 > FLAG")
    done(llm_server)
    result = forge_run(llm_server, workspace, "go")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr and "\\x1b]0;pwned\\x07" in result.stderr


def test_forge_trust_says_what_is_wrong_with_its_arguments_and_store(
    workspace: Path, tmp_path: Path
) -> None:
    missing = forge_trust(workspace, str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr
    hostile(workspace)
    folder = trust_store_path().parent
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("in the way")  # the state folder cannot be created
    blocked = forge_trust(workspace)
    assert blocked.returncode == 1, blocked.stderr
    assert "could not be saved" in blocked.stderr
    assert "Traceback" not in blocked.stderr
