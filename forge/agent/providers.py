"""Providers from settings: the conversation's, and the summarization server's when summaries
go to another API or server (docs/adr/0037)."""

from __future__ import annotations

from forge.config.provider_keys import main_api_key, summarization_api_key
from forge.config.settings import LLMSettings
from forge.llm.anthropic_provider import AnthropicProvider
from forge.llm.openai_provider import OpenAICompatibleProvider

AnyProvider = OpenAICompatibleProvider | AnthropicProvider
"""A provider the session builds (both are `Provider`s and `ModelCloner`s)."""

PROVIDER_FIELDS = (
    "provider",
    "model",
    "base_url",
    "api_key",
    "request_timeout",
    "max_retries",
    "tool_choice",
    "thinking_budget",
    "cache_ttl",
)
"""LLM settings that need a new provider when they change."""

SUMMARIZATION_SERVER_FIELDS = (
    "provider",
    "base_url",
    "api_key",
    "summarization_provider",
    "summarization_base_url",
    "summarization_api_key",
    "request_timeout",
    "max_retries",
    "tool_choice",
    "cache_ttl",
)
"""LLM settings that need a new summarization provider when they change."""


def _build(
    provider: str, model: str, base_url: str, api_key: str, llm: LLMSettings, *, thinking: int
) -> AnyProvider:
    if provider == "anthropic":
        return AnthropicProvider(
            model,
            base_url,
            api_key,
            timeout=llm.request_timeout,
            max_retries=llm.max_retries,
            thinking_budget=thinking,
            cache_ttl=llm.cache_ttl,
        )
    return OpenAICompatibleProvider(
        model,
        base_url,
        api_key,
        timeout=llm.request_timeout,
        max_retries=llm.max_retries,
        tool_choice=llm.tool_choice,
    )


def make_provider(llm: LLMSettings) -> AnyProvider:
    """The conversation's provider: OpenAI-compatible or Anthropic, as `llm.provider` says."""
    return _build(
        llm.provider,
        llm.model,
        llm.effective_base_url,
        main_api_key(llm),
        llm,
        thinking=llm.thinking_budget,
    )


def make_summarization_provider(llm: LLMSettings) -> AnyProvider | None:
    """A provider for the summarization server when it is another API or server than the
    conversation's (the context manager clones it onto the summarization model), else None
    (summaries then clone the conversation's provider)."""
    if not llm.separate_summarization_server:
        return None
    return _build(
        llm.effective_summarization_provider,
        llm.effective_summarization_model,
        llm.effective_summarization_base_url,
        summarization_api_key(llm),
        llm,
        thinking=0,
    )
