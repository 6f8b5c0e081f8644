"""The settings models: defaults, documentation, validation and source precedence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr, ValidationError

from forge.config.settings import (
    ContextSettings,
    LLMSettings,
    Settings,
    SummarizerSettings,
    ToolsSettings,
    UISettings,
    settings_sources,
)


def test_defaults_are_the_documented_ones() -> None:
    settings = Settings()
    assert settings.llm.model == "gpt-4o-mini"
    assert settings.llm.summarization_model == ""
    assert settings.llm.base_url == "https://api.openai.com/v1"
    assert settings.llm.api_key.get_secret_value() == ""
    assert (settings.llm.request_timeout, settings.llm.max_retries) == (120, 4)
    context = settings.context
    assert context.max_tokens is None
    assert (context.warning_threshold, context.auto_summary_threshold) == (0.85, 0.90)
    assert context.threshold_trigger == 0.80
    assert context.excluded_tools == ["task_completion", "ask_question", "converse", "skill"]
    assert (context.goal_batch_min_turns, context.goal_batch_max_turns) == (2, 6)
    assert context.ingest_max_share == 0.5
    assert (context.observation_masking, context.mask_keep_recent, context.mask_batch) == (
        True,
        3,
        3,
    )
    assert context.tool_call_summaries is False
    assert context.user_instruction_share == 0.5
    assert context.summarizer == SummarizerSettings(
        chunk_size=2048, chunk_overlap=200, max_concurrent=5, token_max=3000, max_collapse_depth=10
    )
    assert settings.tools.auto_approve == ["read_file", "list_files", "search_files"]
    assert settings.tools.command_allowlist == []
    assert settings.ui == UISettings(show_reasoning=True, theme="textual-dark")


def _all_fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, Any]]:
    found = []
    for name, field in model.model_fields.items():
        found.append((f"{prefix}{name}", field))
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            found.extend(_all_fields(annotation, f"{prefix}{name}."))
    return found


def test_every_field_has_a_docstring() -> None:
    undocumented = [key for key, field in _all_fields(Settings) if not field.description]
    assert undocumented == []


def test_effective_summarization_model_falls_back_to_model() -> None:
    assert LLMSettings(model="big").effective_summarization_model == "big"
    assert LLMSettings(model="big", summarization_model="  ").effective_summarization_model == "big"
    llm = LLMSettings(model="big", summarization_model="small")
    assert llm.effective_summarization_model == "small"


@pytest.mark.parametrize(
    ("model", "values", "key", "message"),
    [
        (ContextSettings, {"warning_threshold": 0}, "warning_threshold", "must be in (0, 1]"),
        (ContextSettings, {"threshold_trigger": 1.5}, "threshold_trigger", "must be in (0, 1]"),
        (
            ContextSettings,
            {"warning_threshold": 0.9, "auto_summary_threshold": 0.8},
            "auto_summary_threshold",
            "at least context.warning_threshold",
        ),
        (ContextSettings, {"max_tokens": 0}, "max_tokens", "positive"),
        (ContextSettings, {"goal_batch_age": -1}, "goal_batch_age", "positive"),
        (
            ContextSettings,
            {"goal_batch_min_turns": 5, "goal_batch_max_turns": 4},
            "goal_batch_max_turns",
            "at least",
        ),
        (SummarizerSettings, {"chunk_overlap": 2048}, "chunk_overlap", "less than"),
        (SummarizerSettings, {"chunk_size": 0}, "chunk_size", "positive"),
        (LLMSettings, {"base_url": "api.openai.com"}, "base_url", "http(s)://"),
        (LLMSettings, {"base_url": "ftp://host/v1"}, "base_url", "http(s)://"),
        (LLMSettings, {"model": " "}, "model", "must not be empty"),
        (LLMSettings, {"request_timeout": 0}, "request_timeout", "positive"),
        (LLMSettings, {"max_retries": -1}, "max_retries", "zero or more"),
        (ToolsSettings, {"command_timeout": -5}, "command_timeout", "positive"),
    ],
)
def test_invalid_values_are_rejected_naming_the_key(
    model: type[BaseModel], values: dict[str, Any], key: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        model(**values)
    errors = caught.value.errors()
    assert errors[0]["loc"][0] == key
    assert message in errors[0]["msg"]


def test_valid_edge_values_are_accepted() -> None:
    context = ContextSettings(warning_threshold=1, auto_summary_threshold=1, max_tokens=1)
    assert context.auto_summary_threshold == 1
    assert LLMSettings(base_url="http://127.0.0.1:8080").base_url == "http://127.0.0.1:8080"
    assert SummarizerSettings(chunk_size=10, chunk_overlap=0).chunk_overlap == 0


def test_environment_overrides_file_which_overrides_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file_data = {"llm": {"model": "from-file", "max_retries": 9}, "ui": {"theme": "nord"}}
    monkeypatch.setenv("FORGE_LLM__MODEL", "from-env")
    monkeypatch.setenv("FORGE_CONTEXT__SUMMARIZER__CHUNK_SIZE", "4096")
    monkeypatch.setenv("FORGE_TOOLS__AUTO_APPROVE", '["read_file"]')
    with settings_sources(file_data):
        settings = Settings()
    assert settings.llm.model == "from-env"
    assert settings.llm.max_retries == 9
    assert settings.ui.theme == "nord"
    assert settings.context.summarizer.chunk_size == 4096
    assert settings.tools.auto_approve == ["read_file"]
    assert settings.context.warning_threshold == 0.85


def test_openai_variables_fill_key_and_base_url_below_forge_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0000")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with settings_sources({"llm": {"api_key": "sk-file", "base_url": "http://file/v1"}}):
        settings = Settings()
    assert settings.llm.api_key.get_secret_value() == "sk-openai-0000"
    assert settings.llm.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.setenv("FORGE_LLM__API_KEY", "sk-forge-1111")
    assert Settings().llm.api_key.get_secret_value() == "sk-forge-1111"


def test_empty_openai_variables_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    with settings_sources({"llm": {"api_key": "sk-file"}}):
        assert Settings().llm.api_key.get_secret_value() == "sk-file"


def test_constructor_arguments_override_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGE_LLM__MODEL", "from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    overrides: dict[str, Any] = {"llm": {"model": "from-args"}}
    settings = Settings(**overrides)
    assert settings.llm.model == "from-args"
    assert settings.llm.api_key == SecretStr("sk-env")  # a partial dict merges with the rest


def test_settings_alone_never_reads_the_config_file(isolated_environment: Path) -> None:
    config = isolated_environment / "config" / "forge" / "config.yaml"
    config.parent.mkdir()
    config.write_text("llm:\n  model: from-file\n")
    assert Settings().llm.model == "gpt-4o-mini"


def test_unknown_keys_are_ignored_by_the_models() -> None:
    with settings_sources({"llm": {"model": "m", "future_option": 1}, "plugins": {"x": 1}}):
        assert Settings().llm.model == "m"
