"""`forge config path|show|validate` run as real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-9f8e7d6c5b4a3210zyxw"


def _forge_config(action: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **extra_env}
    return subprocess.run(
        [sys.executable, "-m", "forge", "config", action],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _config_file(isolated_environment: Path, text: str) -> Path:
    path = isolated_environment / "config" / "forge" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_path_prints_the_xdg_config_path(isolated_environment: Path) -> None:
    completed = _forge_config("path")
    assert completed.returncode == 0
    expected = isolated_environment / "config" / "forge" / "config.yaml"
    assert completed.stdout.strip() == str(expected)


def test_path_honours_forge_config(tmp_path: Path) -> None:
    completed = _forge_config("path", FORGE_CONFIG=str(tmp_path / "mine.yaml"))
    assert completed.stdout.strip() == str(tmp_path / "mine.yaml")


def test_show_masks_the_key_and_marks_environment_values(isolated_environment: Path) -> None:
    _config_file(isolated_environment, f"llm:\n  model: file-model\n  api_key: {SECRET}\n")
    completed = _forge_config("show", FORGE_UI__THEME="nord")
    assert completed.returncode == 0, completed.stderr
    output = completed.stdout
    assert SECRET not in output + completed.stderr
    assert SECRET[:12] not in output
    shown = yaml.safe_load(output)
    assert shown["llm"]["model"] == "file-model"
    assert shown["llm"]["api_key"] == "sk-…zyxw"
    assert shown["context"]["summarizer"]["chunk_size"] == 2048
    assert "  theme: nord  # from environment" in output.splitlines()
    assert "  model: file-model" in output.splitlines()


def test_show_masks_a_key_from_the_environment() -> None:
    completed = _forge_config("show", OPENAI_API_KEY=SECRET)
    assert completed.returncode == 0
    assert SECRET not in completed.stdout
    assert "  api_key: sk-…zyxw  # from environment" in completed.stdout.splitlines()


def test_show_with_a_broken_file_warns_and_shows_defaults(isolated_environment: Path) -> None:
    _config_file(isolated_environment, "llm:\n  model: [unclosed\n")
    completed = _forge_config("show")
    assert completed.returncode == 0
    assert "config.yaml:" in completed.stderr
    assert yaml.safe_load(completed.stdout)["llm"]["model"] == "gpt-4o-mini"


def test_validate_ok_with_a_good_file(isolated_environment: Path) -> None:
    path = _config_file(isolated_environment, "ui:\n  theme: nord\n")
    completed = _forge_config("validate")
    assert completed.returncode == 0
    assert completed.stdout.strip() == f"ok: {path}"


def test_validate_ok_without_a_file(isolated_environment: Path) -> None:
    completed = _forge_config("validate")
    assert completed.returncode == 0
    assert completed.stdout.startswith("ok: ")


def test_validate_reports_the_line_and_leaves_the_file(isolated_environment: Path) -> None:
    text = f"llm:\n  api_key: {SECRET}\n  base_url: not-a-url\n"
    path = _config_file(isolated_environment, text)
    completed = _forge_config("validate")
    assert completed.returncode == 1
    assert "config.yaml:3: llm.base_url: must look like http(s)://" in completed.stderr
    assert SECRET not in completed.stdout + completed.stderr
    assert path.read_text() == text


def test_validate_reports_a_syntax_error_line(isolated_environment: Path) -> None:
    _config_file(isolated_environment, "ui:\n  theme: nord\n\tbad: tab\n")
    completed = _forge_config("validate")
    assert completed.returncode == 1
    assert "config.yaml:3: invalid YAML" in completed.stderr
