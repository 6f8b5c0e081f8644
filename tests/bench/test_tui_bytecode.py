"""The TUI bench times launches with bytecode written, as an installed Forge has it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bench.tui import compile_bytecode


def test_the_packages_bytecode_is_written_even_when_python_is_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE=1
    source = tmp_path / "app" / "part" / "module.py"
    source.parent.mkdir(parents=True)
    (tmp_path / "app" / "__init__.py").write_text("", encoding="utf-8")
    source.write_text("VALUE = 1\n", encoding="utf-8")
    compile_bytecode(tmp_path, ("app",))
    assert Path(importlib.util.cache_from_source(str(source))).is_file()


def test_a_package_that_does_not_compile_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "broken.py").write_text("def (:\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="does not compile"):
        compile_bytecode(tmp_path, ("app",))
