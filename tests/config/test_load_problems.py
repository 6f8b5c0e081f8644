"""A config with problems: every valid value kept, each problem named, nothing silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.config.load_report import load_report, unreadable_file
from forge.config.paths import config_path
from forge.config.store import load_settings

SECRET = "sk-file-7d6c5b4a3f2e1d0c"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_one_invalid_value_keeps_the_key_the_url_and_the_model() -> None:
    """Issue 10 item 6: `warning_threshold: 1.5` used to drop the whole file."""
    text = (
        f"llm:\n  api_key: {SECRET}\n  base_url: http://127.0.0.1:9/v1\n  model: local-m\n"
        "context:\n  warning_threshold: 1.5\n  max_tokens: 8000\n"
    )
    result = load_settings(_write(config_path(), text))
    assert result.settings.llm.api_key.get_secret_value() == SECRET
    assert result.settings.llm.base_url == "http://127.0.0.1:9/v1"
    assert result.settings.llm.model == "local-m"
    assert result.settings.context.max_tokens == 8000
    assert result.settings.context.warning_threshold == 0.85  # only this one is the default
    [problem] = result.problems
    assert (problem.key, problem.line, problem.message) == (
        "context.warning_threshold",
        6,
        "must be in (0, 1]",
    )
    assert result.save_blocked is None
    [line] = load_report(result)
    assert line.startswith("Config value not applied: config.yaml:6: context.warning_threshold")
    assert SECRET not in line


def test_a_rule_failing_against_a_default_drops_only_the_value_it_names() -> None:
    """warning 0.95 with the default auto threshold 0.90: the warning value is not applied."""
    text = "context:\n  max_tokens: 8000\n  warning_threshold: 0.95\n"
    result = load_settings(_write(config_path(), text))
    assert result.settings.context.max_tokens == 8000
    assert result.settings.context.warning_threshold == 0.85
    [problem] = result.problems
    assert (problem.key, problem.line) == ("context.warning_threshold", 3)
    assert "context.auto_summary_threshold must be at least" in problem.message


@pytest.mark.parametrize(
    ("variable", "value", "key", "reason"),
    [
        ("FORGE_CONTEXT__MAX_TOKENS", "abc", "context.max_tokens", "valid integer"),
        ("FORGE_TOOLS__AUTO_APPROVE", "read_file", None, "not valid JSON"),
        ("FORGE_LLM__BASE_URL", "nowhere", "llm.base_url", "http(s)://"),
        ("OPENAI_BASE_URL", "nowhere", "llm.base_url", "http(s)://"),
    ],
)
def test_an_invalid_environment_value_names_its_variable_and_the_rest_applies(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, key: str | None, reason: str
) -> None:
    _write(config_path(), "context:\n  max_tokens: 4000\nllm:\n  base_url: http://file:1/v1\n")
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("FORGE_UI__THEME", "nord")
    result = load_settings()
    [problem] = result.problems
    assert problem.source == "environment"
    assert problem.variable == variable
    assert problem.key == key
    assert reason in problem.message
    rendered = str(problem)
    assert rendered.startswith(f"environment variable {variable}")
    assert "\n" not in rendered and "EnvSettingsSource" not in rendered
    # The other variable applies; the bad one gives way to the file below it.
    assert result.settings.ui.theme == "nord"
    assert result.settings.context.max_tokens == 4000
    assert result.settings.llm.base_url == "http://file:1/v1"
    assert result.save_blocked is None


def test_unknown_keys_warn_with_a_suggestion_and_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        "context:\n  max_token: 8000\n"
        "max_tokens: 9000\n"
        "llm:\n  modle: x\n"
        "plugins:\n  enabled: true\n"
    )
    monkeypatch.setenv("FORGE_CONTEXT__WARNING_TRESHOLD", "0.5")
    result = load_settings(_write(config_path(), text))
    assert result.error is None
    assert [str(warning) for warning in result.warnings] == [
        "config.yaml:2: context.max_token: unknown key, ignored; did you mean context.max_tokens?",
        "config.yaml:3: max_tokens: unknown key, ignored; did you mean context.max_tokens?",
        "config.yaml:5: llm.modle: unknown key, ignored; did you mean llm.model?",
        "config.yaml:6: plugins: unknown key, ignored (kept in the file)",
        "environment variable FORGE_CONTEXT__WARNING_TRESHOLD (context.warning_treshold): "
        "unknown setting, ignored; did you mean FORGE_CONTEXT__WARNING_THRESHOLD?",
    ]
    assert result.settings.context.max_tokens is None
    assert result.file_data["plugins"] == {"enabled": True}
    assert all(line.startswith("Config warning: ") for line in load_report(result))


def test_variables_of_other_programs_named_forge_are_not_warned_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_HOME", "/opt/other-forge")
    monkeypatch.setenv("FORGE_CONFIG", str(config_path()))
    assert load_settings().warnings == ()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # A key without ":" - yaml notices on the next line.
        ("context:\n  warning_threshold: 1.5\n  bad line here\nui:\n  theme: x\n", 3),
        # Two lines read as one plain scalar, the second with a ":".
        ("llm:\n  model gpt\n  base_url: http://x\n", 2),
        # Unclosed quote: yaml notices at the end of the file.
        ('llm:\n  model: "abc\n  base_url: x\nui:\n  theme: y\n', 2),
        # Unclosed bracket: yaml notices at the next key.
        ("llm:\n  model: x\nui: [broken\ncontext:\n  max_tokens: 5\n", 3),
        ("llm:\n  model: fine\ncontext:\n  a: 0.5\n   b: 0.9\n", 5),
        ("llm:\n\tmodel: x\n", 2),
        ("context:\n  warning_threshold: 0.5\n  - a\n", 3),
    ],
)
def test_a_yaml_syntax_error_names_the_line_to_fix(text: str, line: int) -> None:
    path = _write(config_path(), text)
    result = load_settings(path)
    assert result.error is not None
    assert result.error.line == line, str(result.error)
    assert str(result.error).startswith(f"config.yaml:{line}: invalid YAML: ")
    assert result.save_blocked is not None and "fix it by hand" in result.save_blocked
    assert path.read_text() == text
    assert load_report(result)[0].startswith("Config file not applied: ")
    unreadable = unreadable_file(result)
    assert unreadable is not None and (unreadable.path, unreadable.line) == (path, line)


def test_a_file_used_in_part_is_not_unreadable() -> None:
    path = _write(config_path(), "context:\n  warning_threshold: 7\n")
    result = load_settings(path)
    assert result.error is not None and unreadable_file(result) is None


def test_a_regular_file_where_the_config_directory_belongs_is_named(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = isolated_environment / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(blocker))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-1234567890")
    result = load_settings()
    assert result.error is not None
    assert str(result.error) == (
        f"config.yaml: cannot be read: cannot use {blocker}/forge as a directory: "
        f"{blocker} ($XDG_CONFIG_HOME) is a regular file"
    )
    assert result.settings.llm.api_key.get_secret_value() == "sk-env-1234567890"
    assert result.save_blocked is not None


def test_the_report_says_what_runs_instead_of_a_bad_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORGE_CONTEXT__MAX_TOKENS", "abc")
    [line] = load_report(load_settings())
    assert line.startswith(
        "Environment value not applied: environment variable FORGE_CONTEXT__MAX_TOKENS "
        "(context.max_tokens): "
    )
    assert line.endswith("The value below it (file or default) runs instead.")


def test_the_error_is_the_files_when_both_the_file_and_a_variable_have_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hot reload rejects an edit whose `error.source` is "file"; a bad variable must not
    hide a bad file value behind it."""
    monkeypatch.setenv("FORGE_TOOLS__AUTO_APPROVE", "read_file")
    result = load_settings(_write(config_path(), "context:\n  warning_threshold: 3\n"))
    assert result.error is not None
    assert result.error.source == "file"
    assert [problem.source for problem in result.problems] == ["file", "environment"]
