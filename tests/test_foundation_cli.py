"""The `forge` command as a user meets it, run as real subprocesses: `--version`, `--help`, the
declared console script, and a malformed config file that is reported (with its line) and left
alone instead of crashing anything."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import forge

REPO_ROOT = Path(__file__).resolve().parent.parent
INSTALLED_SCRIPT = shutil.which("forge", path=str(Path(sys.executable).parent))
"""The console script pip installed beside this interpreter (`make test` installs it)."""


def run(*command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command),
        cwd=REPO_ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def forge_module(*arguments: str) -> subprocess.CompletedProcess[str]:
    return run(sys.executable, "-m", "forge", *arguments)


# --- --version and --help -----------------------------------------------------------------------


def test_version_prints_the_package_version() -> None:
    completed = forge_module("--version")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"forge {forge.__version__}"


def test_help_lists_the_commands_and_options() -> None:
    completed = forge_module("--help")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: forge")
    for word in ("run", "config", "sessions", "--version", "--workspace", "--continue"):
        assert word in completed.stdout
    config_help = forge_module("config", "--help")
    assert config_help.returncode == 0
    assert "{path,show,validate}" in config_help.stdout


def test_version_and_help_load_no_user_interface_code() -> None:
    probe = (
        "import sys\n"
        "from forge.cli import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit as exit:\n"
        "        assert exit.code == 0, exit.code\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'textual', 'forge'}))\n"
    )
    completed = run(sys.executable, "-c", probe)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "['forge']"


def test_the_declared_console_script_is_the_cli_entry_point() -> None:
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    target = pyproject["project"]["scripts"]["forge"]
    module, _, function = target.partition(":")
    # Call it the way the generated script does: sys.argv holds the arguments.
    script = f"import sys; from {module} import {function}; sys.exit({function}())"
    completed = run(sys.executable, "-c", script, "--version")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == f"forge {forge.__version__}"


@pytest.mark.skipif(INSTALLED_SCRIPT is None, reason="Forge is not installed in this environment")
def test_the_installed_forge_command_answers_version_and_help() -> None:
    assert INSTALLED_SCRIPT is not None
    version = run(INSTALLED_SCRIPT, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"forge {forge.__version__}"
    help_text = run(INSTALLED_SCRIPT, "--help")
    assert help_text.returncode == 0
    assert help_text.stdout.startswith("usage: forge")


# --- a malformed config file --------------------------------------------------------------------


MALFORMED_FILES: list[tuple[str, bytes, str]] = [
    ("syntax", b"llm:\n  model: fine\n context: [\n", "config.yaml:3: invalid YAML"),
    (
        "invalid value",
        b"ui:\n  theme: nord\ncontext:\n  warning_threshold: 1.5\n",
        "config.yaml:4: context.warning_threshold: must be in (0, 1]",
    ),
    (
        "auto below warning",
        b"context:\n  warning_threshold: 0.9\n  auto_summary_threshold: 0.5\n",
        "config.yaml:3: context.auto_summary_threshold: must be at least",
    ),
    ("not a mapping", b"- llm\n- ui\n", "config.yaml:1: the top level must be a mapping"),
    ("not UTF-8", b"llm:\n  model: caf\xe9\n", "config.yaml: is not UTF-8 text"),
]


@pytest.mark.parametrize(
    ("content", "reported"),
    [(content, reported) for _, content, reported in MALFORMED_FILES],
    ids=[name for name, _, _ in MALFORMED_FILES],
)
def test_a_malformed_file_is_reported_and_left_alone(
    isolated_environment: Path, content: bytes, reported: str
) -> None:
    path = isolated_environment / "config" / "forge" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    before = (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_mode)

    validate = forge_module("config", "validate")
    assert validate.returncode == 1
    assert validate.stderr.startswith(f"error: {path}\n")
    assert reported in validate.stderr
    assert "Traceback" not in validate.stderr

    # Forge keeps going on defaults (and the environment), saying why.
    show = forge_module("config", "show")
    assert show.returncode == 0, show.stderr
    assert reported in show.stderr
    assert "showing defaults" in show.stderr
    # The invalid value (or the whole unparsable file) falls back to the default; a valid
    # value beside it would still apply (ADR 0022).
    assert yaml.safe_load(show.stdout)["context"]["auto_summary_threshold"] == 0.90

    assert (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_mode) == before


def test_forge_config_points_at_another_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("llm:\n  base_url: ftp://example.com\n")
    monkeypatch.setenv("FORGE_CONFIG", str(elsewhere))
    validate = forge_module("config", "validate")
    assert validate.returncode == 1
    assert "elsewhere.yaml:2: llm.base_url: must look like http(s)://" in validate.stderr
