"""Loading the config file: precedence, errors with line numbers, and bad files left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.config.paths import config_path
from forge.config.store import load_settings


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_missing_file_gives_defaults_without_error() -> None:
    result = load_settings()
    assert result.path == config_path()
    assert result.error is None
    assert result.file_data == {}
    assert result.settings.llm.model == "gpt-4o-mini"
    assert not result.path.exists()


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_empty_file_gives_defaults(text: str) -> None:
    result = load_settings(_write(config_path(), text))
    assert result.error is None
    assert result.file_data == {}


def test_file_values_override_defaults_and_environment_overrides_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(
        config_path(),
        "llm:\n  model: from-file\n  api_key: sk-file-aaaa\ncontext:\n  warning_threshold: 0.5\n",
    )
    monkeypatch.setenv("FORGE_LLM__MODEL", "from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-bbbb")
    result = load_settings(path)
    assert result.error is None
    assert result.settings.llm.model == "from-env"
    assert result.settings.llm.api_key.get_secret_value() == "sk-env-bbbb"
    assert result.settings.context.warning_threshold == 0.5
    assert result.settings.context.auto_summary_threshold == 0.90
    assert result.env_keys == frozenset({"llm.model", "llm.api_key"})
    assert result.file_data["llm"]["model"] == "from-file"


SYNTAX_ERROR = """\
llm:
  model: fine
context:
  warning_threshold: 0.5
   auto_summary_threshold: 0.9
"""


def test_syntax_error_reports_its_line_and_keeps_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(config_path(), SYNTAX_ERROR)
    before = _snapshot(path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-cccc")
    result = load_settings(path)
    assert result.error is not None
    assert result.error.line == 5
    assert str(result.error).startswith("config.yaml:5: invalid YAML")
    # Defaults plus environment: still usable, nothing from the broken file.
    assert result.settings.llm.model == "gpt-4o-mini"
    assert result.settings.llm.api_key.get_secret_value() == "sk-env-cccc"
    assert _snapshot(path) == before


INVALID_VALUES = """\
# my precious settings
llm:
  model: mine
  base_url: ftp://nowhere
context:
  warning_threshold: 2
  excluded_tools:
    - converse
    - 7: x
  summarizer:
    chunk_size: 100
    chunk_overlap: 150
"""


def test_validation_errors_name_key_and_line_keep_the_valid_values_and_the_file() -> None:
    path = _write(config_path(), INVALID_VALUES)
    before = _snapshot(path)
    result = load_settings(path)
    error = result.error
    assert error is not None
    assert (error.line, error.key) == (4, "llm.base_url")
    assert str(error) == "config.yaml:4: llm.base_url: must look like http(s)://host[:port][/path]"
    assert error.details[1:] == (
        "config.yaml:6: context.warning_threshold: must be in (0, 1]",
        "config.yaml:9: context.excluded_tools.1: Input should be a valid string",
        "config.yaml:12: context.summarizer.chunk_overlap: must be less than summarizer.chunk_size",
        # Without the overlap, the default overlap (200) is too big for this chunk size.
        "config.yaml:11: context.summarizer.chunk_size: not applied: "
        "context.summarizer.chunk_overlap must be less than summarizer.chunk_size",
    )
    assert [problem.key for problem in result.problems] == [
        "llm.base_url",
        "context.warning_threshold",
        "context.excluded_tools.1",
        "context.summarizer.chunk_overlap",
        "context.summarizer.chunk_size",
    ]
    # Every valid value is kept; each invalid one falls back to its default alone.
    assert result.settings.llm.model == "mine"
    assert result.settings.llm.base_url == "https://api.openai.com/v1"
    assert result.settings.context.warning_threshold == 0.85
    assert result.settings.context.excluded_tools == [
        "task_completion",
        "ask_question",
        "converse",
        "skill",
    ]
    assert result.settings.context.summarizer.chunk_size == 2048
    assert result.save_blocked is None
    assert result.file_data["llm"]["model"] == "mine"
    assert _snapshot(path) == before


def test_cross_field_error_points_at_the_later_key() -> None:
    text = "context:\n  auto_summary_threshold: 0.7\n  warning_threshold: 0.8\n"
    result = load_settings(_write(config_path(), text))
    assert result.error is not None
    assert (result.error.line, result.error.key) == (2, "context.auto_summary_threshold")


def test_section_of_the_wrong_type_points_at_the_section() -> None:
    result = load_settings(_write(config_path(), "ui: {}\nllm: 5\n"))
    assert result.error is not None
    assert (result.error.line, result.error.key) == (2, "llm")


def test_top_level_that_is_not_a_mapping_is_an_error() -> None:
    result = load_settings(_write(config_path(), "- llm\n- context\n"))
    assert result.error is not None
    assert result.error.line == 1
    assert "mapping" in str(result.error)


def test_invalid_environment_value_keeps_the_file_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(config_path(), "ui:\n  theme: nord\n")
    monkeypatch.setenv("FORGE_CONTEXT__WARNING_THRESHOLD", "7")
    result = load_settings(path)
    assert result.error is not None
    assert result.error.source == "environment"
    assert result.error.line is None
    assert str(result.error) == (
        "environment variable FORGE_CONTEXT__WARNING_THRESHOLD (context.warning_threshold): "
        "must be in (0, 1]"
    )
    assert result.settings.ui.theme == "nord"
    assert result.settings.context.warning_threshold == 0.85


def test_secret_in_a_wrong_place_is_not_echoed_in_the_error() -> None:
    text = "llm:\n  api_key: [sk-supersecret-9999]\n  max_retries: sk-supersecret-8888\n"
    result = load_settings(_write(config_path(), text))
    assert result.error is not None
    rendered = "\n".join(result.error.details)
    assert "supersecret" not in rendered
    assert "llm.api_key" in rendered


def test_python_tags_are_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f'llm: !!python/object/apply:os.system ["touch {marker}"]\n'
    result = load_settings(_write(config_path(), text))
    assert result.error is not None
    assert result.error.line == 1
    assert not marker.exists()


def test_a_directory_where_the_file_should_be_is_an_error_not_a_crash() -> None:
    config_path().mkdir(parents=True)
    result = load_settings()
    assert result.error is not None
    assert "directory" in str(result.error)
    assert result.settings.llm.model == "gpt-4o-mini"


def test_unknown_keys_are_kept_in_file_data_and_do_not_fail() -> None:
    text = "llm:\n  model: m\n  someday: 1\nplugins:\n  enabled: [a]\n"
    result = load_settings(_write(config_path(), text))
    assert result.error is None
    assert result.settings.llm.model == "m"
    assert result.file_data["plugins"] == {"enabled": ["a"]}
    assert result.file_data["llm"]["someday"] == 1


def test_the_repr_of_a_load_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-file-REPR-0a1b2c3d4e5f"
    path = _write(config_path(), f"llm:\n  api_key: {secret}\n  base_url: nope\n")
    monkeypatch.setenv("FORGE_UI__THEME", "nord")
    broken = load_settings(path)
    assert broken.error is not None
    path.write_text(f"llm:\n  api_key: {secret}\n")
    loaded = load_settings(path)
    assert loaded.settings.llm.api_key.get_secret_value() == secret
    assert loaded.file_data["llm"]["api_key"] == secret  # kept for saving, but never shown
    for result in (broken, loaded):
        shown = repr(result) + str(result.settings) + repr(result.error) + str(result.error)
        assert secret not in shown
        assert "config.yaml" in repr(result)
