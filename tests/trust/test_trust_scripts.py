"""Trust covers the scripts a definition names (issue 34): after `forge trust`, new content
in the `hook.sh` a trusted hook runs, or in the `server.sh` a trusted MCP server runs, makes
the next `forge run` warn and skip them, as a changed definition does; `forge trust` again
lets them run. Real `forge run` and `forge trust` processes against the loopback server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent.hooks.support import command_hook, write_project_hooks
from tests.headless.test_headless import forge_run
from tests.support.openai_server import Call, OpenAIServer, ToolCalls
from tests.trust.test_forge_run_trust import done, forge_trust


def test_a_trusted_hooks_changed_script_is_asked_about_again(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "hook.sh").write_text("echo first >> HOOK_RAN\n")
    write_project_hooks(workspace, {"UserPromptSubmit": [command_hook("sh ./hook.sh")]})
    assert forge_trust(workspace).returncode == 0
    done(llm_server)
    first = forge_run(llm_server, workspace, "--yes", "go")
    assert first.returncode == 0, first.stderr
    assert (workspace / "HOOK_RAN").read_text() == "first\n"

    (workspace / "hook.sh").write_text("echo pulled >> HOOK_RAN\n")  # a `git pull`
    done(llm_server)
    second = forge_run(llm_server, workspace, "--yes", "go")
    assert second.returncode == 0, second.stderr
    assert (workspace / "HOOK_RAN").read_text() == "first\n"  # the new script did not run
    assert "changed since it was trusted" in second.stderr

    assert forge_trust(workspace).returncode == 0  # the user looked and trusts it again
    done(llm_server)
    third = forge_run(llm_server, workspace, "--yes", "go")
    assert third.returncode == 0, third.stderr
    assert (workspace / "HOOK_RAN").read_text() == "first\npulled\n"


def test_a_trusted_mcp_servers_changed_script_is_not_started(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / ".forge").mkdir()
    (workspace / "server.sh").write_text("echo started >> SERVER_RAN\n")
    entry = {"command": "sh", "args": ["server.sh"], "startup_timeout": 5}
    (workspace / ".forge" / "mcp.yaml").write_text(json.dumps({"mcpServers": {"tool": entry}}))
    assert forge_trust(workspace).returncode == 0
    (workspace / "server.sh").write_text("echo swapped >> SERVER_RAN\n")
    llm_server.enqueue(ToolCalls([Call("task_completion", {"result": "done"})]))
    result = forge_run(llm_server, workspace, "--yes", "go")

    assert result.returncode == 0, result.stderr
    assert not (workspace / "SERVER_RAN").exists()
    assert ".forge/mcp.yaml not used" in result.stderr
    assert "changed since it was trusted" in result.stderr


def test_a_script_changed_during_a_run_is_not_run_by_the_next_hook(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "hook.sh").write_text("echo first >> HOOK_RAN\n")
    write_project_hooks(workspace, {"PreToolUse": [command_hook("sh ./hook.sh")]})
    assert forge_trust(workspace).returncode == 0
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo 'echo evil >> HOOK_RAN' > hook.sh"})]),
        ToolCalls([Call("execute_command", {"command": "true"})]),
        ToolCalls([Call("task_completion", {"result": "done"})]),
    )
    result = forge_run(llm_server, workspace, "--yes", "go")

    assert result.returncode == 0, result.stderr
    # The first call's hook ran the trusted script; the script it rewrote never ran.
    assert (workspace / "HOOK_RAN").read_text() == "first\n"
