"""Model name -> encoding, context window and reply headroom."""

from __future__ import annotations

import pytest

from forge.llm.model_info import (
    DEFAULT_CONTEXT_WINDOW,
    MAXIMUM_REPLY_HEADROOM,
    context_window,
    default_reply_headroom,
    encoding_name_for,
    normalize_model_name,
)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("chatgpt-4o-latest", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("OpenAI/GPT-4o", "o200k_base"),
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-0613", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("openai/gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("gpt-35-turbo", "cl100k_base"),
        ("text-embedding-3-small", "cl100k_base"),
        ("text-embedding-ada-002", "cl100k_base"),
        ("anthropic/claude-sonnet-4", "o200k_base"),
        ("qwen2.5-coder:32b", "o200k_base"),
        ("something-nobody-has-heard-of", "o200k_base"),
    ],
)
def test_encoding_name_for(model: str, expected: str) -> None:
    assert encoding_name_for(model) == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o", 128_000),
        ("openai/gpt-4o-mini", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-5", 400_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("o1-mini", 128_000),
        ("gpt-4", 8_192),
        ("gpt-4-0613", 8_192),
        ("gpt-4-32k", 32_768),
        ("gpt-4-turbo", 128_000),
        ("gpt-3.5-turbo", 16_385),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("anthropic/claude-opus-4", 200_000),
        ("meta-llama/llama-3.3-70b-instruct:free", 131_072),
        ("llama3.1:8b", 131_072),
        ("llama3:8b", 8_192),
        ("meta-llama/Meta-Llama-3-8B-Instruct", 8_192),
        ("qwen/qwen3-coder", 262_144),
        ("qwen3:32b", 32_768),
        ("mistralai/mistral-large-2411", 131_072),
        ("mistral-7b-instruct", 32_768),
        ("deepseek/deepseek-chat", 65_536),
        ("deepseek-r1:14b", 65_536),
        ("my-fine-tuned-thing", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_context_window(model: str, expected: int) -> None:
    assert context_window(model) == expected


def test_the_default_window_is_conservative() -> None:
    assert DEFAULT_CONTEXT_WINDOW == 32_768


def test_normalize_model_name_strips_provider_and_variant() -> None:
    assert normalize_model_name(" OpenAI/GPT-4o ") == "gpt-4o"
    assert (
        normalize_model_name("meta-llama/llama-3.3-70b-instruct:free") == "llama-3.3-70b-instruct"
    )
    assert normalize_model_name("ft:gpt-4o-mini:acme::x") == "gpt-4o-mini"
    assert normalize_model_name("accounts/fireworks/models/qwen3-235b") == "qwen3-235b"


@pytest.mark.parametrize(
    ("window", "expected"),
    [
        (8_192, 1_024),
        (32_768, 4_096),
        (128_000, 16_000),
        (200_000, MAXIMUM_REPLY_HEADROOM),
        (1_047_576, MAXIMUM_REPLY_HEADROOM),
    ],
)
def test_default_reply_headroom(window: int, expected: int) -> None:
    assert default_reply_headroom(window) == expected
    assert default_reply_headroom(window) < window


def test_default_reply_headroom_rejects_a_nonsense_window() -> None:
    with pytest.raises(ValueError):
        default_reply_headroom(0)


def test_claude_models_have_their_window_and_reply_limit() -> None:
    from forge.llm.model_info import DEFAULT_MAX_OUTPUT_TOKENS, max_output_tokens

    for model in ("claude-sonnet-4-5", "claude-opus-4-1-20250805", "claude-3-5-haiku-latest"):
        assert context_window(model) == 200_000
    assert max_output_tokens("claude-sonnet-4-5-20250929") == 64_000
    assert max_output_tokens("claude-opus-4-1") == 32_000
    assert max_output_tokens("anthropic/claude-haiku-4-5") == 64_000
    assert max_output_tokens("some-gateway-model") == DEFAULT_MAX_OUTPUT_TOKENS
