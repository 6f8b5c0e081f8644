"""The one road of context events (docs/adr/0039): the context manager is given the agent's
`TurnEvents.emit` at construction, and every turn and /compact receives its own events with no
attribute swapped — driven against the loopback server with the real manager."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from forge.agent.events import (
    ContextUsage,
    RetryScheduled,
    SummarizationCompleted,
    SummarizationStarted,
    Trigger,
)
from forge.agent.turn.turn_events import TurnEvents
from forge.config.settings import LLMSettings, Settings
from forge.context.manager import Manager
from forge.llm.messages import Message
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished, of_type, with_manager
from tests.context.builders import conversation, counter, group, llm_tiers, provider_for, words
from tests.support.openai_server import (
    Call,
    Fault,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)

MAIN, SUMMARIZER = "main-model", "summarizer"
MODEL = "runtime-model"


def settings_for(server: OpenAIServer) -> Settings:
    values = {"base_url": server.base_url, "api_key": SecretStr("sk-test-0123456789"),
              "max_retries": 0, "model": MODEL}  # fmt: skip
    return Settings(llm=LLMSettings.model_validate(values))


def old_work(count: int) -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        output = words(200, f"s{number:02d}") + "\nexit code: 0"
        messages.extend(group("execute_command", output, arguments={"command": f"make {number}"}))
    return messages


def answer(request: RecordedRequest) -> Reply:
    if request.model == SUMMARIZER:
        return Text("Built parts 0-11 with make; all passed.")
    return Text(f"answer {len(request.messages)}")


async def test_turns_and_compaction_get_their_events_through_the_emit_given_at_construction(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.responder = answer
    chat = conversation(old_work(12))
    async with provider_for(llm_server, MAIN) as provider:
        agent, manager = with_manager(
            provider,
            workspace,
            lambda emit: Manager(
                llm_tiers(tool_call_summaries=False),
                provider,
                counter(),
                context_window=1_000_000,
                summarization_model=SUMMARIZER,
                emit=emit,
            ),
            conversation=chat,
        )
        assert not hasattr(manager, "event_sink")  # nothing to swap
        first = await drive(agent.run_turn("build the parts"))
        second = await drive(agent.run_turn("now the docs"))
        compaction = await drive(agent.compact("mention make"))
        agent.turn_events.emit(ContextUsage(1, 2))  # after the turn: nobody listens, no harm
        third = await drive(agent.run_turn("and the tests"))

    for turn in (first, second, third):
        assert finished(turn).reason == "answered"
        usage = of_type(turn, ContextUsage)
        assert usage and usage[0].max_tokens == manager.max_tokens  # the manager's own
        assert ContextUsage(1, 2) not in turn  # the stray emit went nowhere
    assert isinstance(compaction[0], SummarizationStarted)
    started = of_type(compaction, SummarizationStarted)
    completed = of_type(compaction, SummarizationCompleted)
    assert [(s.strategy, s.trigger, s.model) for s in started] == [
        ("threshold", Trigger.MANUAL, SUMMARIZER)
    ]
    assert "all passed" in completed[0].summary  # the summary itself, in its event
    assert llm_server.requests_for(SUMMARIZER)


def test_an_emit_with_no_turn_attached_is_dropped_and_attachments_nest() -> None:
    road = TurnEvents()
    outer: list[object] = []
    inner: list[object] = []
    road.emit(ContextUsage(1, 10))  # nothing attached: dropped
    with road.attached(outer.append):
        road.emit(ContextUsage(2, 10))
        with road.attached(inner.append):
            road.emit(ContextUsage(3, 10))
        road.emit(ContextUsage(4, 10))
    road.emit(ContextUsage(5, 10))
    assert outer == [ContextUsage(2, 10), ContextUsage(4, 10)]
    assert inner == [ContextUsage(3, 10)]


async def test_the_session_builds_the_manager_with_the_agents_road_and_keeps_it_on_a_rebuild(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Reply:
        if not request.tools:
            return Text("SUMMARY: a.txt was read.")
        if request.messages[-1]["role"] == "user":
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text(f"answer {len(request.messages)}")

    llm_server.responder = respond
    settings = settings_for(llm_server)
    session = build_session(settings, workspace)
    try:
        for text in ("one", "two", "three"):
            await drive(session.agent.run_turn(text))
        first = await drive(session.agent.compact())
        summarized = session.agent.costs.summarization[MODEL].prompt
        changed = settings.model_copy(
            update={"context": settings.context.model_copy(update={"warning_threshold": 0.5})}
        )
        old_manager = session.context_manager
        assert "context settings" in session.apply_settings(changed)
        assert session.context_manager is not old_manager  # rebuilt, with the same road
        for text in ("four", "five"):
            await drive(session.agent.run_turn(text))
        second = await drive(session.agent.compact())
    finally:
        await session.aclose()

    for compaction in (first, second):
        completed = of_type(compaction, SummarizationCompleted)
        assert completed and "a.txt was read" in completed[0].summary
    assert summarized > 0  # the summary request was costed through the usage sink
    assert session.agent.costs.summarization[MODEL].prompt > summarized  # and after the rebuild


async def test_the_summarizers_retries_reach_the_client_like_the_agents_own(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    summary_requests = 0

    def flaky_summarizer(request: RecordedRequest) -> Reply | Fault:
        nonlocal summary_requests
        if request.model == SUMMARIZER:
            summary_requests += 1
            if summary_requests == 1:
                return Fault(503, {"error": {"message": "overloaded"}})
        return answer(request)

    llm_server.responder = flaky_summarizer
    chat = conversation(old_work(12))
    provider = OpenAICompatibleProvider(
        MAIN, llm_server.base_url, "sk-test-0123456789", max_retries=2, backoff_base=0.0
    )
    try:
        agent, _ = with_manager(
            provider,
            workspace,
            lambda emit: Manager(
                llm_tiers(tool_call_summaries=False),
                provider,
                counter(),
                context_window=1_000_000,
                summarization_model=SUMMARIZER,
                emit=emit,
            ),
            conversation=chat,
        )
        compaction = await drive(agent.compact("mention make"))
    finally:
        await provider.aclose()

    retries = of_type(compaction, RetryScheduled)
    assert [(retry.model, retry.attempt, retry.status_code) for retry in retries] == [
        (SUMMARIZER, 1, 503)
    ]
    # Told before the summary it delayed, inside the run it belongs to.
    kinds = [type(event) for event in compaction]
    assert kinds.index(SummarizationStarted) < kinds.index(RetryScheduled)
    assert kinds.index(RetryScheduled) < kinds.index(SummarizationCompleted)
    assert "all passed" in of_type(compaction, SummarizationCompleted)[0].summary
