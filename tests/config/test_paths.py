"""XDG paths: where each file lives, overrides, and no side effects on import."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from forge.config import paths


def test_config_path_follows_xdg_config_home(isolated_environment: Path) -> None:
    expected = isolated_environment / "config" / "forge" / "config.yaml"
    assert paths.config_path() == expected


def test_forge_config_overrides_the_config_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FORGE_CONFIG", str(tmp_path / "elsewhere.yaml"))
    assert paths.config_path() == tmp_path / "elsewhere.yaml"


def test_defaults_under_home_when_xdg_is_unset_or_relative(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/is/ignored")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME")
    home = isolated_environment
    assert paths.config_path() == home / ".config" / "forge" / "config.yaml"
    assert paths.data_dir() == home / ".local" / "share" / "forge"
    assert paths.state_dir() == home / ".local" / "state" / "forge"
    assert paths.cache_dir() == home / ".cache" / "forge"


def test_data_state_cache_sessions_and_log(isolated_environment: Path) -> None:
    home = isolated_environment
    assert paths.data_dir() == home / "data" / "forge"
    assert paths.state_dir() == home / "state" / "forge"
    assert paths.cache_dir() == home / "cache" / "forge"
    assert paths.sessions_dir() == home / "data" / "forge" / "sessions"
    assert paths.log_path() == home / "state" / "forge" / "forge.log"


def test_ensure_dir_creates_private_directories(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert paths.ensure_dir(target) == target
    assert target.is_dir()
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    paths.ensure_dir(target)  # a second call is harmless


def test_importing_and_computing_paths_creates_nothing(isolated_environment: Path) -> None:
    before = sorted(str(path) for path in isolated_environment.rglob("*"))
    code = (
        "import forge.config, forge.config.watcher, forge.config.commands\n"
        "from forge.config import paths\n"
        "paths.config_path(); paths.data_dir(); paths.sessions_dir(); paths.log_path()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
    after = sorted(str(path) for path in isolated_environment.rglob("*"))
    assert after == before
