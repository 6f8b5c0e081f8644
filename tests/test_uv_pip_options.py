"""scripts/uv_pip_options.py: the Makefile's uv install is told what this machine's pip uses
(index, extra indexes, find-links, constraints, pip's choice among indexes), run as make runs
it and on `pip config list` output."""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "uv_pip_options.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("uv_pip_options", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pips_settings_become_uvs_options_and_the_environment_wins(tmp_path: Path) -> None:
    script = load()
    wheels, other, constraints = tmp_path / "wheels", tmp_path / "other", tmp_path / "c.txt"
    wheels.mkdir()
    other.mkdir()
    constraints.write_text("torch<=2\n")
    listed = "\n".join(
        [
            f":env:.find-links='{wheels}'",
            ":env:.cert='/etc/ssl/certs/ca-certificates.crt'",
            f"global.constraint='{constraints}'",
            f"global.extra-index-url='file://{other} file://{tmp_path / 'missing'}'",
            f"global.find-links='{other}'",
            "global.index-url='https://mirror.example/simple'",
        ]
    )
    assert script.uv_options(script.pip_settings(listed)) == [
        "--index-strategy", "unsafe-best-match",
        "--index-url", "https://mirror.example/simple",
        "--extra-index-url", f"file://{other}",  # the missing local index is left out
        "--find-links", str(wheels),  # the environment's, not the file's
        "--constraint", str(constraints),
    ]  # fmt: skip


def test_the_script_prints_options_for_this_machines_pip() -> None:
    printed = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    options = shlex.split(printed)
    assert options[:2] == ["--index-strategy", "unsafe-best-match"]
    assert len(options) % 2 == 0
