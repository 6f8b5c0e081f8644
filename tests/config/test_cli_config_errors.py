"""`forge` and `forge run` with a broken environment or XDG directory: one clear line, exit 2.

Real subprocesses; nothing reaches a provider (the checks come first).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _forge(*arguments: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forge", *arguments],
        cwd=REPO_ROOT,
        env={**os.environ, **extra_env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [("FORGE_TOOLS__AUTO_APPROVE", "read_file,list_files"), ("FORGE_CONTEXT__MAX_TOKENS", "abc")],
)
def test_forge_run_names_an_invalid_variable_and_exits_2(
    workspace: Path, variable: str, value: str
) -> None:
    completed = _forge("run", "hello", "-C", str(workspace), **{variable: value})
    assert completed.returncode == 2
    assert f"environment variable {variable}" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert "EnvSettingsSource" not in completed.stderr


@pytest.mark.parametrize("variable", ["XDG_DATA_HOME", "XDG_STATE_HOME"])
@pytest.mark.parametrize("command", [["run", "hello"], []])
def test_a_regular_file_for_an_xdg_directory_is_one_line_and_exit_2(
    tmp_path: Path, workspace: Path, variable: str, command: list[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    completed = _forge(*command, "-C", str(workspace), **{variable: str(blocker)})
    assert completed.returncode == 2
    assert completed.stderr == (
        f"forge: cannot use {blocker}/forge as a directory: {blocker} (${variable}) "
        "is a regular file\n"
    )
    assert blocker.read_text() == "not a directory\n"


def test_a_regular_file_for_the_config_directory_makes_forge_run_exit_2(
    tmp_path: Path, workspace: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    completed = _forge("run", "hello", "-C", str(workspace), XDG_CONFIG_HOME=str(blocker))
    assert completed.returncode == 2
    assert f"{blocker} ($XDG_CONFIG_HOME) is a regular file" in completed.stderr
    assert "Traceback" not in completed.stderr


def test_validate_warns_about_an_unknown_key_and_still_passes(isolated_environment: Path) -> None:
    path = isolated_environment / "config" / "forge" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("context:\n  max_token: 8000\n")
    completed = _forge("config", "validate")
    assert completed.returncode == 0
    assert completed.stderr == (
        "warning: config.yaml:2: context.max_token: unknown key, ignored; "
        "did you mean context.max_tokens?\n"
    )
    assert completed.stdout == f"ok: {path} with 1 warning(s)\n"
