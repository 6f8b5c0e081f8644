"""`forge sandbox --check`: what confines the model's commands here, by what, and why not;
exit 1 when it should confine and cannot, 0 otherwise (docs/adr/0053)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from forge.agent.sandbox.probe import landlock_abi
from tests.agent.sandbox.support import needs_bubblewrap
from tests.headless.test_headless import REPO_ROOT


def forge_sandbox(workspace: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forge", "sandbox", "--check", str(workspace)],
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_bubblewrap
def test_check_runs_a_confined_command_and_lists_the_promises(workspace: Path) -> None:
    checked = forge_sandbox(workspace)
    assert checked.returncode == 0, checked.stderr
    assert "Sandbox: on (bubblewrap, no network)" in checked.stdout
    assert "writable: the workspace" in checked.stdout
    assert "Unconfined always: your ! commands" in checked.stdout
    # What is in force is said plainly, Landlock's part too (docs/adr/0053, addendum).
    if landlock_abi():
        assert f"Landlock (ABI {landlock_abi()}): not used; bubblewrap's" in checked.stdout


def test_check_says_why_nothing_confines_and_fails(workspace: Path) -> None:
    checked = forge_sandbox(workspace, PATH="/nonexistent")
    assert checked.returncode == 1
    assert "bubblewrap is not installed" in checked.stdout
    if landlock_abi():
        assert "does not confine with it alone: it would keep only some" in checked.stdout
    turned_off = forge_sandbox(workspace, PATH="/nonexistent", FORGE_TOOLS__SANDBOX__MODE="off")
    assert turned_off.returncode == 0
    assert "tools.sandbox.mode is off" in turned_off.stdout
