"""`Session.apply_settings` switching providers (the /settings Provider field's save path,
docs/adr/0037): the next turn goes to the other API, summaries follow
`llm.summarization_provider`, and replaced providers are closed."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from forge.config.settings import LLMSettings, Settings
from forge.llm.anthropic_provider import AnthropicProvider
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished
from tests.support.anthropic_server import Answer, AnthropicServer
from tests.support.openai_server import OpenAIServer, Text

OPENAI_KEY = "sk-test-switch-openai-0123456789"
ANTHROPIC_KEY = "sk-ant-test-switch-0123456789"


def openai_settings(server: OpenAIServer) -> Settings:
    llm = LLMSettings(
        model="gpt-4o-mini", base_url=server.base_url, api_key=SecretStr(OPENAI_KEY), max_retries=0
    )
    return Settings(llm=llm)


def anthropic_llm(server: AnthropicServer, **more: object) -> LLMSettings:
    return LLMSettings.model_validate(
        {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "base_url": server.base_url,
            "api_key": SecretStr(ANTHROPIC_KEY),
            "max_retries": 0,
            **more,
        }
    )


async def test_saving_another_provider_switches_the_next_turn_to_it(
    llm_server: OpenAIServer, anthropic_server: AnthropicServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("from openai"))
    anthropic_server.enqueue(Answer("from claude"))
    session = build_session(openai_settings(llm_server), workspace)
    try:
        first = await drive(session.agent.run_turn("one"))
        assert isinstance(session.provider, OpenAICompatibleProvider)
        change = session.apply_settings(
            Settings(llm=anthropic_llm(anthropic_server), context=session.settings.context)
        )
        assert "anthropic" in change
        assert isinstance(session.provider, AnthropicProvider)
        assert session.agent.provider is session.provider
        second = await drive(session.agent.run_turn("two"))
    finally:
        await session.aclose()

    assert finished(first).final_text == "from openai"
    assert finished(second).final_text == "from claude"
    assert len(llm_server.requests) == 1 and len(anthropic_server.requests) == 1
    # The conversation so far went along, in the Messages API's shape.
    sent = anthropic_server.requests[0]
    assert [m["role"] for m in sent.messages] == ["user", "assistant", "user"]
    assert sent.messages[1]["content"][0]["text"] == "from openai"


async def test_summaries_go_to_the_summarization_provider_and_follow_its_changes(
    llm_server: OpenAIServer, anthropic_server: AnthropicServer, workspace: Path
) -> None:
    llm = anthropic_llm(
        anthropic_server,
        summarization_provider="openai",
        summarization_base_url=llm_server.base_url,
        summarization_api_key=SecretStr(OPENAI_KEY),
        summarization_model="tiny-summarizer",
    )
    session = build_session(Settings(llm=llm), workspace)
    try:
        assert isinstance(session.summarization_provider, OpenAICompatibleProvider)
        summarizer = session.context_manager.provider_for_summarization()
        assert isinstance(summarizer, OpenAICompatibleProvider)
        assert summarizer.model == "tiny-summarizer"
        assert summarizer.base_url == llm_server.base_url
        # Back to one server: summaries clone the conversation's provider again.
        session.apply_settings(Settings(llm=anthropic_llm(anthropic_server)))
        assert session.summarization_provider is None
        again = session.context_manager.provider_for_summarization()
        assert isinstance(again, AnthropicProvider) and again.model == "claude-haiku-4-5"
    finally:
        await session.aclose()
