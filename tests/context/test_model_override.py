"""The summarization model override: every summary request names it, every agent request names
the main model, before and after a change; cleared, summaries go to the main model."""

from __future__ import annotations

import json

import httpx

from forge.config.settings import ContextSettings
from forge.context import prompts
from forge.context.manager import Manager
from forge.llm.messages import Message, user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.protocols import Provider
from tests.context.builders import (
    MAIN_MODEL,
    conversation,
    counter,
    filler,
    group,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text


def old_groups(marker: str) -> list[Message]:
    messages: list[Message] = []
    for number in range(10):
        messages.extend(group("read_file", words(150, f"{marker}{number}")))
    return [*task_start(), *messages, *filler(20)]


def is_summary_request(request: RecordedRequest) -> bool:
    return request.messages[0]["content"] == prompts.SUMMARIZER_SYSTEM_PROMPT


async def test_summaries_go_to_the_override_and_agent_calls_to_the_main_model(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I read a file.")
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, summarization_model="summary-small")
        assert manager.summarization_model == "summary-small"

        await provider.complete([user("agent turn one")])
        await manager.evaluate_and_summarize(conversation(old_groups("a")))
        assert len(llm_server.requests_for("summary-small")) == 10

        manager.set_summarization_model("summary-other")  # takes effect at once
        await provider.complete([user("agent turn two")])
        await manager.evaluate_and_summarize(conversation(old_groups("b")))
        assert len(llm_server.requests_for("summary-other")) == 10

        manager.set_summarization_model("")  # cleared: the main model summarizes
        assert manager.provider_for_summarization().model == MAIN_MODEL
        await manager.evaluate_and_summarize(conversation(old_groups("c")))

    summary_requests = [r for r in llm_server.requests if is_summary_request(r)]
    agent_requests = [r for r in llm_server.requests if not is_summary_request(r)]
    assert [r.model for r in summary_requests] == (
        ["summary-small"] * 10 + ["summary-other"] * 10 + [MAIN_MODEL] * 10
    )
    assert [r.model for r in agent_requests] == [MAIN_MODEL, MAIN_MODEL]


async def test_the_clone_is_reused_and_replaced_with_the_provider(
    llm_server: OpenAIServer,
) -> None:
    async with provider_for(llm_server) as provider, provider_for(llm_server, "next") as other:
        manager = make_manager(provider, summarization_model="summary-small")
        clone = manager.provider_for_summarization()
        assert clone is not provider and clone.model == "summary-small"
        assert manager.provider_for_summarization() is clone
        manager.set_provider(other)
        replacement = manager.provider_for_summarization()
        assert replacement is not clone and replacement.model == "summary-small"
        assert manager.provider_for_summarization() is replacement


class _PlainProvider:
    """A provider that cannot clone itself: wraps a real one, exposing only the protocol."""

    def __init__(self, inner: Provider) -> None:
        self._inner = inner
        self.stream = inner.stream
        self.complete = inner.complete

    @property
    def model(self) -> str:
        return self._inner.model


async def test_a_provider_that_cannot_clone_summarizes_with_itself(
    llm_server: OpenAIServer,
) -> None:
    async with provider_for(llm_server) as provider:
        plain = _PlainProvider(provider)
        manager = Manager(
            ContextSettings(),
            plain,
            counter(),
            context_window=100_000,
            summarization_model="summary-small",
        )
        assert manager.provider_for_summarization() is plain


async def test_the_summarizer_window_follows_the_summarization_model(
    llm_server: OpenAIServer,
) -> None:
    async with provider_for(llm_server, "gpt-4o") as provider:
        manager = make_manager(provider)
        wide = manager.summarizer.single_call_limit
        manager.set_summarization_model("gpt-4-0613")  # an 8k-window model
        narrow = manager.summarizer.single_call_limit
        assert wide is not None and narrow is not None and narrow < 8192 < wide


async def test_the_clone_shares_the_main_providers_http_client(llm_server: OpenAIServer) -> None:
    sent_models: list[str] = []

    async def record(request: httpx.Request) -> None:
        sent_models.append(json.loads(request.content)["model"])

    async with httpx.AsyncClient(event_hooks={"request": [record]}) as client:
        provider = OpenAICompatibleProvider(
            MAIN_MODEL, llm_server.base_url, "sk-test", client=client, max_retries=0
        )
        llm_server.responder = lambda request: Text("I read a file.")
        manager = make_manager(provider, summarization_model="summary-small")
        clone = manager.provider_for_summarization()
        assert isinstance(clone, OpenAICompatibleProvider)
        assert clone is not provider and clone.model == "summary-small"
        await manager.evaluate_and_summarize(conversation(old_groups("a")))
        await provider.complete([user("agent turn")])
        await provider.aclose()
        await clone.aclose()  # neither closes a client it does not own
        assert not client.is_closed
    assert sent_models == ["summary-small"] * 10 + [MAIN_MODEL]
