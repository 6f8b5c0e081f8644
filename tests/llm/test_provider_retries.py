"""Bounded retries: which failures are retried, how often, and never after output was shown.

Backoff is tiny here so the tests run fast; they count the requests the server saw and never
measure time."""

from __future__ import annotations

import asyncio
import random

import pytest

from forge.llm.errors import (
    AuthenticationError,
    QuotaExhaustedError,
    RateLimitError,
    ServerError,
    StreamError,
    TransportError,
)
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.retry import RetryPolicy
from forge.llm.stream import MessageDelta, RetryScheduled, StreamEvent, StreamFinished
from tests.support.openai_server import (
    Disconnect,
    Fault,
    OpenAIServer,
    QuotaExhausted,
    RateLimited,
    Raw,
    Text,
)


def make_provider(server: OpenAIServer, **options: float) -> OpenAICompatibleProvider:
    settings: dict = {"max_retries": 4, "backoff_base": 0.001, "backoff_max": 0.01} | options
    return OpenAICompatibleProvider("m", server.base_url, "k", **settings)


async def drain(provider: OpenAICompatibleProvider) -> list[StreamEvent]:
    return [event async for event in provider.stream([user("hi")])]


def final_text(events: list[StreamEvent]) -> str:
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return last.completion.message.content


@pytest.mark.parametrize(
    "fault",
    [
        Fault(500, {"error": {"message": "boom"}}),
        Fault(502, "bad gateway"),
        Fault(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"}),
        Disconnect(Text("never shown"), after_chunks=1),
        Raw(b'event: error\ndata: {"error": {"message": "overloaded"}}\n\n'),
    ],
)
async def test_retryable_failures_before_output_are_retried(
    llm_server: OpenAIServer, fault: Fault | Disconnect | Raw
) -> None:
    provider = make_provider(llm_server)
    llm_server.enqueue(fault, Text("recovered"))
    events = await drain(provider)
    assert final_text(events) == "recovered"
    assert len(llm_server.requests) == 2
    await provider.aclose()


async def test_complete_retries_too(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server)
    llm_server.enqueue(Fault(503, "busy"), Fault(500, "boom"), Text("fine"))
    completion = await provider.complete([user("hi")])
    assert completion.message.content == "fine"
    assert len(llm_server.requests) == 3
    await provider.aclose()


async def test_retries_are_bounded(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server, max_retries=2)
    llm_server.enqueue(*[Fault(500, "boom") for _ in range(6)])
    with pytest.raises(ServerError):
        await drain(provider)
    assert len(llm_server.requests) == 3
    with pytest.raises(ServerError):
        await provider.complete([user("hi")])
    assert len(llm_server.requests) == 6
    await provider.aclose()


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault(429, {"error": {"message": "no credit", "code": "insufficient_quota"}}),
         QuotaExhaustedError),
        (Fault(401, {"error": {"message": "bad key"}}), AuthenticationError),
    ],
)  # fmt: skip
async def test_permanent_failures_are_not_retried(
    llm_server: OpenAIServer, fault: Fault, expected: type[Exception]
) -> None:
    provider = make_provider(llm_server)
    llm_server.enqueue(fault, Text("must not be reached"))
    with pytest.raises(expected):
        await drain(provider)
    assert len(llm_server.requests) == 1
    await provider.aclose()


async def test_no_retry_once_text_reached_the_caller(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server)
    llm_server.enqueue(
        Disconnect(Text("partial answer that gets cut", chunk_size=4), after_chunks=3),
        Text("a retry would show this"),
    )
    seen: list[StreamEvent] = []
    with pytest.raises(TransportError):
        async for event in provider.stream([user("hi")]):
            seen.append(event)
    assert [event.text for event in seen if isinstance(event, MessageDelta)] == ["part", "ial "]
    assert len(llm_server.requests) == 1
    await provider.aclose()


async def test_no_retry_after_an_error_event_that_follows_output(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server)
    body = (
        b'data: {"choices": [{"index": 0, "delta": {"reasoning": "thinking"}}]}\n\n'
        b'event: error\ndata: {"error": {"message": "tool call validation failed"}}\n\n'
    )
    llm_server.enqueue(Raw(body), Text("a retry would show this"))
    with pytest.raises(StreamError, match="tool call validation failed"):
        await drain(provider)
    assert len(llm_server.requests) == 1
    await provider.aclose()


async def test_retry_after_is_honoured_but_capped(llm_server: OpenAIServer) -> None:
    # An hour-long Retry-After is capped by backoff_max, so this finishes promptly.
    provider = make_provider(llm_server, backoff_max=0.01)
    llm_server.enqueue(
        Fault(429, {"error": {"message": "slow"}}, headers={"Retry-After": "3600"}),
        Text("after the wait"),
    )
    assert final_text(await drain(provider)) == "after the wait"
    assert len(llm_server.requests) == 2
    await provider.aclose()


def test_backoff_is_jittered_between_half_the_exponential_ceiling_and_the_ceiling() -> None:
    policy = RetryPolicy(max_retries=5, backoff_base=0.5, backoff_max=4.0,
                         random_source=random.Random(7))  # fmt: skip
    error = ServerError("boom", status=500)
    for retries_done, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        delays = [policy.delay(error, retries_done) for _ in range(200)]
        # The floor keeps a burst of 5xx answers from using up every retry at once.
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        # The jitter still spreads over the upper half rather than clustering at one point.
        assert min(delays) < ceiling * 0.6 and max(delays) > ceiling * 0.9
    assert policy.delay(RateLimitError("slow", retry_after=1.5), 0) == 1.5
    assert policy.delay(RateLimitError("slow", retry_after=99.0), 0) == 4.0
    assert policy.should_retry(error, 4) and not policy.should_retry(error, 5)
    assert not policy.should_retry(QuotaExhaustedError("no credit"), 0)


async def test_stream_options_rejection_is_remembered_by_clones(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server, max_retries=0)
    llm_server.reject_stream_options = True
    assert final_text(await drain(provider)) == "ok"
    assert [("stream_options" in r.body) for r in llm_server.requests] == [True, False]

    clone = provider.clone_with_model("summarizer")
    assert final_text(await drain(clone)) == "ok"
    assert final_text(await drain(provider)) == "ok"
    assert [("stream_options" in r.body) for r in llm_server.requests[2:]] == [False, False]
    await provider.aclose()


def retries(events: list[StreamEvent]) -> list[RetryScheduled]:
    return [event for event in events if isinstance(event, RetryScheduled)]


async def test_a_retry_is_an_event_before_the_answer(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server, backoff_base=0.001, backoff_max=30)
    llm_server.enqueue(
        Fault(503, {"error": {"message": "overloaded"}}), RateLimited("0.02"), Text("fine")
    )
    events = await drain(provider)
    scheduled = retries(events)
    assert [(r.attempt, r.max_attempts, r.status_code, r.error_kind) for r in scheduled] == [
        (1, 4, 503, "server_error"),
        (2, 4, 429, "rate_limited"),
    ]
    assert 0 < scheduled[0].delay <= 0.001  # the jittered backoff of the first retry
    assert scheduled[1].delay == 0.02  # the server's Retry-After
    assert "overloaded" in scheduled[0].message and scheduled[0].model == "m"
    # Both retries come before any of the answer, and the answer follows whole.
    first_text = next(i for i, e in enumerate(events) if isinstance(e, MessageDelta))
    assert events.index(scheduled[1]) < first_text
    assert final_text(events) == "fine"
    assert len(llm_server.requests) == 3
    await provider.aclose()


async def test_complete_tells_on_retry(llm_server: OpenAIServer) -> None:
    provider = make_provider(llm_server)
    llm_server.enqueue(Fault(500, "boom"), Text("whole"))
    told: list[RetryScheduled] = []
    completion = await provider.complete([user("hi")], on_retry=told.append)
    assert completion.message.content == "whole"
    assert [(r.attempt, r.status_code) for r in told] == [(1, 500)]
    await provider.aclose()


async def test_the_server_hint_sets_the_wait_in_seconds_or_milliseconds(
    llm_server: OpenAIServer,
) -> None:
    # A jittered backoff would be at most 0.001 s here, so exact values prove the hint won.
    provider = make_provider(llm_server, backoff_base=0.001, backoff_max=30)
    llm_server.enqueue(RateLimited("1"), RateLimited(retry_after_ms="50"), Text("streamed"))
    events = await drain(provider)
    assert final_text(events) == "streamed"
    llm_server.enqueue(RateLimited(retry_after_ms="20", retry_after="9"), Text("whole"))
    told: list[RetryScheduled] = []
    assert (await provider.complete([user("hi")], on_retry=told.append)).message.content == "whole"
    # retry-after-ms is the more precise of the two, so it wins over Retry-After.
    assert [r.delay for r in retries(events) + told] == [1.0, 0.05, 0.02]
    assert len(llm_server.requests) == 5
    await provider.aclose()


async def test_quota_exhaustion_is_never_retried_whole_or_mid_stream(
    llm_server: OpenAIServer,
) -> None:
    provider = make_provider(llm_server)
    quota_event = (
        b'data: {"error": {"message": "You exceeded your current quota",'
        b' "code": "insufficient_quota"}}\n\n'
    )
    llm_server.enqueue(QuotaExhausted(), Raw(quota_event), Text("must not be reached"))
    told: list[RetryScheduled] = []
    with pytest.raises(QuotaExhaustedError):
        await provider.complete([user("hi")], on_retry=told.append)
    seen: list[StreamEvent] = []
    with pytest.raises(QuotaExhaustedError):
        async for event in provider.stream([user("hi")]):
            seen.append(event)
    assert len(llm_server.requests) == 2
    assert told == [] and retries(seen) == []
    await provider.aclose()


async def test_cancelling_during_the_wait_before_a_retry_sends_nothing_more(
    llm_server: OpenAIServer,
) -> None:
    provider = make_provider(llm_server, backoff_max=600)
    llm_server.enqueue(RateLimited("600"), Text("must not be reached"))
    seen: list[StreamEvent] = []
    announced = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream([user("hi")]):
            seen.append(event)
            announced.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(announced.wait(), 30)
    assert [r.delay for r in retries(seen)] == [600.0]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(llm_server.requests) == 1
    assert llm_server.pending == 1
    await provider.aclose()
