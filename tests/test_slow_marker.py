"""`-m "not slow"` (the Makefile's PYTEST_ARGS while iterating) leaves out the tests that drive a
real terminal or spawn `forge`, and only those: collected as `make test` collects them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def collected(*arguments: str) -> list[str]:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider",
         *arguments],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return [line for line in completed.stdout.splitlines() if "::" in line]


def test_not_slow_leaves_out_terminal_and_spawning_tests_and_keeps_the_rest() -> None:
    files = ("tests/tui/test_e2e_tmux.py", "tests/headless/test_forge_run_modes.py",
             "tests/test_uv_pip_options.py")  # fmt: skip
    everything = collected(*files)
    kept = collected("-m", "not slow", *files)
    assert any("test_e2e_tmux.py" in test for test in everything)
    assert any("test_forge_run_modes.py" in test for test in everything)
    assert kept == [test for test in everything if "test_uv_pip_options.py" in test] != []
