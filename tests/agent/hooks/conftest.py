"""The hooks tests' workspace is its real path (hooks get `cwd` and `file_path` resolved)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory, as its real path (symlinks resolved)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path.resolve()
