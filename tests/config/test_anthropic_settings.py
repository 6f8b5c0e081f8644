"""Settings for the Anthropic provider (docs/adr/0037): the provider picked by the base URL,
each API's default base URL, which key goes to which server, the thinking budget's bounds, and
every Anthropic-related key known as a secret."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from forge.config.provider_keys import api_key_for, main_api_key, summarization_api_key
from forge.config.secrets import settings_secrets
from forge.config.settings import LLMSettings, Settings


def test_a_base_url_on_anthropic_com_picks_the_anthropic_provider() -> None:
    assert LLMSettings().provider == "openai"
    assert LLMSettings(base_url="https://api.anthropic.com/v1").provider == "anthropic"
    assert LLMSettings(base_url="https://eu.api.anthropic.com").provider == "anthropic"
    assert LLMSettings(base_url="https://notanthropic.com/v1").provider == "openai"
    # Said explicitly, the provider stands (a compatibility endpoint, say).
    explicit = LLMSettings(provider="openai", base_url="https://api.anthropic.com/v1/")
    assert explicit.provider == "openai"


def test_the_openai_default_base_url_stands_for_anthropics_api() -> None:
    assert LLMSettings(provider="anthropic").effective_base_url == "https://api.anthropic.com"
    gateway = LLMSettings(provider="anthropic", base_url="http://127.0.0.1:4000")
    assert gateway.effective_base_url == "http://127.0.0.1:4000"
    assert LLMSettings().effective_base_url == "https://api.openai.com/v1"


def test_the_summarization_server_defaults_to_the_main_one() -> None:
    same = LLMSettings(provider="anthropic", summarization_model="claude-haiku-4-5")
    assert not same.separate_summarization_server
    assert same.effective_summarization_provider == "anthropic"
    mixed = LLMSettings(provider="anthropic", summarization_provider="openai")
    assert mixed.separate_summarization_server
    assert mixed.effective_summarization_base_url == "https://api.openai.com/v1"
    local = LLMSettings(summarization_base_url="http://127.0.0.1:8080/v1")
    assert local.separate_summarization_server
    with pytest.raises(ValidationError, match="summarization_base_url"):
        LLMSettings(summarization_base_url="not a url")


def test_anthropic_api_key_comes_before_the_file_and_openais_key_never_goes_to_anthropic() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-env", "OPENAI_API_KEY": "sk-openai-env"}
    assert api_key_for("anthropic", "sk-file", env) == "sk-ant-env"
    assert api_key_for("openai", "sk-openai-env", env) == "sk-openai-env"
    # Only OPENAI_API_KEY filled llm.api_key: not sent to Anthropic.
    assert api_key_for("anthropic", "sk-openai-env", {"OPENAI_API_KEY": "sk-openai-env"}) == ""
    assert api_key_for("anthropic", "sk-file", {}) == "sk-file"
    # FORGE_LLM__API_KEY is Forge's own setting: it wins.
    assert api_key_for("anthropic", "sk-forge", {**env, "FORGE_LLM__API_KEY": "sk-forge"}) == (
        "sk-forge"
    )


def test_the_summarization_key_follows_its_server() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-env", "OPENAI_API_KEY": "sk-openai-env"}
    mixed = LLMSettings(
        provider="anthropic", summarization_provider="openai", api_key=SecretStr("sk-openai-env")
    )
    assert main_api_key(mixed, env) == "sk-ant-env"
    assert summarization_api_key(mixed, env) == "sk-openai-env"
    reverse = LLMSettings(summarization_provider="anthropic", api_key=SecretStr("sk-openai-env"))
    assert summarization_api_key(reverse, env) == "sk-ant-env"
    own = mixed.model_copy(update={"summarization_api_key": SecretStr("sk-own")})
    assert summarization_api_key(own, env) == "sk-own"
    same = LLMSettings(provider="anthropic", api_key=SecretStr("sk-file"))
    assert summarization_api_key(same, {}) == "sk-file"


def test_the_thinking_budget_is_off_or_at_least_the_apis_minimum() -> None:
    assert LLMSettings(thinking_budget=0).thinking_budget == 0
    assert LLMSettings(thinking_budget=4096).thinking_budget == 4096
    with pytest.raises(ValidationError, match="at least 1024"):
        LLMSettings(thinking_budget=500)
    with pytest.raises(ValidationError, match="cache_ttl"):
        LLMSettings(cache_ttl="2h")  # type: ignore[arg-type]


def test_anthropic_keys_are_known_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-env")
    settings = Settings(llm=LLMSettings(summarization_api_key=SecretStr("sk-summary-secret")))
    file_data = {"llm": {"summarization_api_key": "sk-summary-in-file"}}
    secrets = settings_secrets(settings, file_data)
    assert {"sk-ant-secret-env", "sk-summary-secret", "sk-summary-in-file"} <= set(secrets)
