"""Project hooks are programs the workspace defines: they run only in a trusted workspace,
with the same gate and fingerprint as project MCP servers (docs/adr/0034, 0043)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge.agent.hooks.engine import Hooks
from forge.agent.hooks.events import HookEvent
from forge.agent.trust.command import run_trust_command
from forge.agent.trust.gate import TrustStatus, WorkspaceTrust
from forge.agent.trust.programs import ProgramSource
from forge.agent.trust.sources import workspace_sources
from forge.config.store import load_settings
from tests.agent.hooks.support import (
    command_hook,
    session,
    write_project_hooks,
    write_user_hooks,
)

FLAG_HOOK = {"Stop": [command_hook("echo ran > FLAG")]}


def hook_source(workspace: Path, file: str = ".forge/hooks.json") -> ProgramSource:
    (source,) = [s for s in workspace_sources(workspace) if s.file == file]
    return source


async def run_stop(hooks: Hooks, workspace: Path) -> None:
    await hooks.stop(session(workspace), "done", stop_hook_active=False)


async def test_an_untrusted_project_hook_does_not_run(workspace: Path) -> None:
    write_project_hooks(workspace, FLAG_HOOK)
    trust = WorkspaceTrust(workspace)
    source = hook_source(workspace)
    assert trust.status(source) is TrustStatus.UNDECIDED
    (program,) = source.programs
    assert (program.name, program.command) == ("Stop hook", "echo ran > FLAG")

    hooks = Hooks.load(load_settings().settings, workspace, trust)
    assert not hooks.active(HookEvent.STOP)
    await run_stop(hooks, workspace)
    assert not (workspace / "FLAG").exists()
    assert hooks.warnings == [
        "hooks of .forge/hooks.json not run: this workspace is not trusted "
        "(see /trust or `forge trust`)"
    ]
    (listed,) = hooks.listing()
    assert (listed.origin, listed.state) == (".forge/hooks.json", "not trusted")
    # Without a trust gate at all, nothing the workspace defines runs either.
    assert not Hooks.load(load_settings().settings, workspace, None).active(HookEvent.STOP)


async def test_a_trusted_hook_runs_and_a_changed_one_needs_trust_again(workspace: Path) -> None:
    path = write_project_hooks(workspace, FLAG_HOOK)
    assert WorkspaceTrust(workspace).trust(workspace_sources(workspace)) == ""

    trust = WorkspaceTrust(workspace)  # a new session: the stored decision counts
    hooks = Hooks.load(load_settings().settings, workspace, trust)
    assert hooks.active(HookEvent.STOP) and not hooks.warnings
    await run_stop(hooks, workspace)
    assert (workspace / "FLAG").read_text() == "ran\n"

    data = json.loads(path.read_text())
    data["hooks"]["Stop"][0]["hooks"][0]["command"] = "echo changed > FLAG2"
    path.write_text(json.dumps(data))
    assert trust.status(hook_source(workspace)) is TrustStatus.CHANGED
    hooks = Hooks.load(load_settings().settings, workspace, trust)
    assert not hooks.active(HookEvent.STOP)
    await run_stop(hooks, workspace)
    assert not (workspace / "FLAG2").exists()


async def test_trust_workspace_for_this_run_runs_them(workspace: Path) -> None:
    write_project_hooks(workspace, FLAG_HOOK)
    trust = WorkspaceTrust(workspace, trusted_for_run=True)
    await run_stop(Hooks.load(load_settings().settings, workspace, trust), workspace)
    assert (workspace / "FLAG").exists()


def test_claude_settings_hooks_are_fingerprinted_apart_from_its_other_keys(
    workspace: Path,
) -> None:
    settings_file = workspace / ".claude" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(json.dumps({"permissions": {"allow": []}, "hooks": FLAG_HOOK}))
    trust = WorkspaceTrust(workspace)
    trust.trust(workspace_sources(workspace))
    settings_file.write_text(
        json.dumps({"permissions": {"allow": ["Bash(ls)"]}, "hooks": FLAG_HOOK}, indent=4)
    )
    assert trust.status(hook_source(workspace, ".claude/settings.json")) is TrustStatus.TRUSTED
    changed = {"Stop": [command_hook("echo other")]}
    settings_file.write_text(json.dumps({"permissions": {"allow": []}, "hooks": changed}))
    assert trust.status(hook_source(workspace, ".claude/settings.json")) is TrustStatus.CHANGED


def test_forge_trust_lists_and_trusts_project_hooks(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_project_hooks(workspace, {"PreToolUse": [command_hook("./guard.sh", matcher="Bash")]})
    assert run_trust_command(str(workspace)) == 0
    out = capsys.readouterr().out
    assert ".forge/hooks.json: not trusted (not decided yet); it would run:" in out
    assert "PreToolUse hook (Bash): ./guard.sh" in out
    hooks = Hooks.load(load_settings().settings, workspace, WorkspaceTrust(workspace))
    assert hooks.active(HookEvent.PRE_TOOL_USE)


def test_a_workspace_without_hook_files_lists_only_its_mcp_file(workspace: Path) -> None:
    assert [source.file for source in workspace_sources(workspace)] == [".forge/mcp.yaml"]


async def test_user_hooks_run_in_an_untrusted_workspace(workspace: Path) -> None:
    result = write_user_hooks(FLAG_HOOK)
    await run_stop(Hooks.load(result.settings, workspace, WorkspaceTrust(workspace)), workspace)
    assert (workspace / "FLAG").exists()


async def test_disabled_and_no_hooks_run_nothing(workspace: Path) -> None:
    write_project_hooks(workspace, FLAG_HOOK)
    trust = WorkspaceTrust(workspace, trusted_for_run=True)
    result = write_user_hooks(FLAG_HOOK, disabled=True)
    hooks = Hooks.load(result.settings, workspace, trust)
    assert hooks.disabled and not hooks.active(HookEvent.STOP)
    assert {listed.state for listed in hooks.listing()} == {"disabled"}
    await run_stop(hooks, workspace)
    enabled = write_user_hooks(FLAG_HOOK)
    await run_stop(Hooks.load(enabled.settings, workspace, trust, no_hooks=True), workspace)
    assert not (workspace / "FLAG").exists()


async def test_a_command_in_both_user_and_project_hooks_runs_once(
    workspace: Path, tmp_path: Path
) -> None:
    count = tmp_path / "count"
    both = {"Stop": [command_hook(f"echo ran >> {count}")]}
    write_project_hooks(workspace, both)
    result = write_user_hooks(both)
    trust = WorkspaceTrust(workspace, trusted_for_run=True)
    await run_stop(Hooks.load(result.settings, workspace, trust), workspace)
    assert count.read_text() == "ran\n"
