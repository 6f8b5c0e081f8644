"""The summarizer breaker, tested by counting what the loopback server receives: nothing is
known against a model at start, so its first batch goes out whole (`FIRST_BATCH` requests at
once, `max_concurrent_summaries`; docs/adr/0052); then a summarizer that never answers gets one
attempt per backoff window, a 404 model no request for the rest of the session, a 500-ing model
no more attempts for the rest of the run; summary calls use their own timeout even on the main
model; progress never counts a failure as done."""

from __future__ import annotations

from typing import TypeVar

from forge.context import prompts
from forge.context.conversation import Conversation
from forge.context.events import (
    ContextEvent,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
)
from forge.context.manager import Manager
from forge.context.summarizer_breaker import BACKOFF_BASE_S, SummarizerBreaker
from forge.llm.messages import Message, assistant
from tests.context.builders import (
    conversation,
    filler,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, RecordedRequest, Reply, Text

EventT = TypeVar("EventT")

FIRST_BATCH = 5
"""Requests of a first batch: `context.max_concurrent_summaries` (its default), all sent at once."""


class Clock:
    """A clock the test moves by hand (the breaker's backoff windows are 30 s and more)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def is_summary(request: RecordedRequest) -> bool:
    return request.messages[0]["content"] == prompts.SUMMARIZER_SYSTEM_PROMPT


def summary_requests(server: OpenAIServer) -> list[RecordedRequest]:
    return [request for request in list(server.requests) if is_summary(request)]


def of(kind: type[EventT], events: list[ContextEvent]) -> list[EventT]:
    return [event for event in events if isinstance(event, kind)]


def steps(count: int, marker: str = "s") -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(
            group(
                "execute_command",
                words(200, f"{marker}{number:02d}") + "\nexit code: 0",
                arguments={"command": f"make part{number}"},
            )
        )
    return messages


def agent_step(chat: Conversation, number: int) -> None:
    """What one agent call adds: a tool call, its result and a note."""
    chat.append(assistant(f"step {number}"))
    for message in steps(1, marker=f"n{number % 100:02d}"):
        chat.append(message)


def manager_with(
    provider: object, events: list[ContextEvent], clock: Clock, **changes: object
) -> Manager:
    values: dict[str, object] = {"summary_request_timeout": 0.3, "summary_max_retries": 0}
    values.update(changes)
    settings = llm_tiers(**values)
    return make_manager(
        provider,  # type: ignore[arg-type]
        settings,
        events=events,
        breaker=SummarizerBreaker(clock=clock),
        summarization_model="cheap-m",
    )


async def test_a_summarizer_that_never_answers_gets_one_batch_then_one_attempt_per_window(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Reply:
        return Text("too late", delay=3.0) if is_summary(request) else Text("ok")

    llm_server.responder = respond
    events: list[ContextEvent] = []
    clock = Clock()
    chat = conversation(task_start(), steps(10), filler(20))
    async with provider_for(llm_server) as provider:
        manager = manager_with(provider, events, clock)
        for number in range(30):  # thirty agent calls inside one backoff window
            await manager.evaluate_and_summarize(chat)
            agent_step(chat, number)
        # The first batch went out whole; the groups queued behind it were never sent.
        assert len(summary_requests(llm_server)) == FIRST_BATCH
        clock.now += BACKOFF_BASE_S  # the window is over: one probe, then a longer wait
        for number in range(30, 40):
            await manager.evaluate_and_summarize(chat)
            agent_step(chat, number)
        assert len(summary_requests(llm_server)) == FIRST_BATCH + 1
        clock.now += BACKOFF_BASE_S  # the second window is twice as long
        await manager.evaluate_and_summarize(chat)
        assert len(summary_requests(llm_server)) == FIRST_BATCH + 1
        clock.now += BACKOFF_BASE_S
        await manager.evaluate_and_summarize(chat)
        assert len(summary_requests(llm_server)) == FIRST_BATCH + 2
    assert all(request.model == "cheap-m" for request in summary_requests(llm_server))
    assert not of(SummarizerDisabled, events)  # a timeout is transient: summaries stay on
    assert chat.is_valid()


async def test_a_404_model_costs_one_batch_for_the_session_and_one_notice(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Reply:
        if request.model == "cheap-m":
            return Fault(404, {"error": {"message": "The model cheap-m does not exist"}})
        return Text("I ran make.")

    llm_server.responder = respond
    events: list[ContextEvent] = []
    clock = Clock()
    chat = conversation(task_start(), steps(10), filler(20))
    async with provider_for(llm_server) as provider:
        manager = manager_with(provider, events, clock, max_tokens=40_000)
        for number in range(16):
            await manager.evaluate_and_summarize(chat)
            agent_step(chat, number)
            clock.now += 3600  # no backoff window to hide behind: the model is off for good
        assert len(summary_requests(llm_server)) == FIRST_BATCH
        # Room is needed now: the deterministic tiers take over at once, with no request.
        while manager.current_tokens(chat) < 0.95 * manager.max_tokens:
            agent_step(chat, 99)
        await manager.evaluate_and_summarize(chat)
        assert len(summary_requests(llm_server)) == FIRST_BATCH
        assert manager.current_tokens(chat) < 0.9 * manager.max_tokens
        fallback_runs = [c for c in of(SummarizationCompleted, events) if c.model == "none"]
        assert fallback_runs
        notices = of(SummarizerDisabled, events)
        assert len(notices) == 1
        notice = notices[0]
        assert (notice.model, notice.reason) == ("cheap-m", "404")
        assert notice.text == (
            "Summaries are off: model cheap-m answered 404. Older tool outputs will be "
            "shortened instead. Fix: /settings → Summarization Model"
        )
        # The settings change: summaries are on again, on the new model.
        manager.set_summarization_model("good-m")
        for number in range(40):
            agent_step(chat, number)
        await manager.evaluate_and_summarize(chat)
        assert llm_server.requests_for("good-m")
    assert len(llm_server.requests_for("cheap-m")) == FIRST_BATCH
    assert chat.is_valid()


async def test_a_500ing_model_stops_the_run_and_progress_counts_no_failure_as_done(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "overloaded"}})
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(20), filler(20))
    async with provider_for(llm_server) as provider:
        manager = manager_with(provider, events, Clock(), summary_max_retries=1)
        await manager.evaluate_and_summarize(chat)
    started = of(SummarizationStarted, events)
    assert started[0].items == 20
    # the first batch's attempts and their one retry each; the other 15 groups were never sent
    assert len(summary_requests(llm_server)) == 2 * FIRST_BATCH
    progress = of(SummarizationProgress, events)
    assert len(progress) == 20
    assert all(event.done == 0 for event in progress)
    assert progress[-1].failed == progress[-1].total == 20
    failed = of(SummarizationFailed, events)
    assert len(failed) == 1 and failed[0].items_applied == 0
    assert "ServerError" in failed[0].error
    assert not of(SummarizerDisabled, events)
    assert chat.is_valid()


async def test_summaries_on_the_main_model_use_the_summary_timeout(
    llm_server: OpenAIServer,
) -> None:
    def respond(request: RecordedRequest) -> Reply:
        return Text("too late", delay=3.0) if is_summary(request) else Text("ok")

    llm_server.responder = respond
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(10), filler(20))
    settings = llm_tiers(summary_request_timeout=0.3, summary_max_retries=0)
    async with provider_for(llm_server) as provider:  # its own timeout is 120 s
        manager = make_manager(provider, settings, events=events)
        assert manager.summarization_model == ""
        await manager.evaluate_and_summarize(chat)
    failed = of(SummarizationFailed, events)
    assert len(failed) == 1 and "Timed out" in failed[0].error
    assert [request.model for request in summary_requests(llm_server)] == [
        provider.model
    ] * FIRST_BATCH
