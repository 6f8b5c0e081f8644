"""A provider's HTTP transport (httpcore, the TLS context) is made by its first request, in
a worker thread, not when the provider is made at start-up (docs/adr/0042); requests then
go through it as before, concurrent first requests share one, and closing works either way."""

from __future__ import annotations

import asyncio

from forge.llm.deferred_transport import DeferredTransport
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.support.openai_server import OpenAIServer, Text


def transport_of(provider: OpenAICompatibleProvider) -> DeferredTransport:
    transport = provider._client._transport  # the client's default transport
    assert isinstance(transport, DeferredTransport)
    return transport


async def test_the_transport_is_made_by_the_first_request(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("one"), Text("two"))
    provider = OpenAICompatibleProvider("m", llm_server.base_url, "k", max_retries=0)
    transport = transport_of(provider)
    assert not transport.made

    first = await provider.complete([user("hi")])
    made = transport._transport
    second = await provider.complete([user("again")])

    assert transport.made and transport._transport is made  # one transport, reused
    assert [first.message.content, second.message.content] == ["one", "two"]
    await provider.aclose()


async def test_first_requests_at_once_share_one_transport(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("a"), Text("b"), Text("c"))
    provider = OpenAICompatibleProvider("m", llm_server.base_url, "k", max_retries=0)

    answers = await asyncio.gather(*(provider.complete([user(str(n))]) for n in range(3)))

    assert sorted(answer.message.content for answer in answers) == ["a", "b", "c"]
    assert transport_of(provider).made
    await provider.aclose()


async def test_a_provider_that_never_sent_closes_cleanly(llm_server: OpenAIServer) -> None:
    provider = OpenAICompatibleProvider("m", llm_server.base_url, "k", max_retries=0)
    await provider.aclose()
    assert not transport_of(provider).made
