"""The manager: usage, warnings, strategy order, auto-summarization, failures and the
fallback ladder, and no compaction loops — all against the loopback server."""

from __future__ import annotations

import asyncio
from typing import TypeVar

import pytest

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.events import (
    ContextEvent,
    ContextUsage,
    ContextWarning,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    Trigger,
)
from forge.context.manager import Manager
from forge.context.protocols import ContextManagerProtocol
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    counter,
    filler,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, Text

EventT = TypeVar("EventT")


def steps(count: int, size: int = 200, marker: str = "s") -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        messages.extend(
            group(
                "execute_command",
                words(size, f"{marker}{number:02d}") + "\nexit code: 0",
                arguments={"command": f"make part{number}"},
            )
        )
    return messages


def of(kind: type[EventT], events: list[ContextEvent]) -> list[EventT]:
    return [event for event in events if isinstance(event, kind)]


async def test_manager_implements_the_protocol(llm_server: OpenAIServer) -> None:
    async with provider_for(llm_server) as provider:
        manager: ContextManagerProtocol = make_manager(provider)
        assert isinstance(manager, Manager)
        assert manager.max_tokens == 1_000_000 - 16_384
        summarizer = manager.provider_for_summarization()  # a clone: own timeout and retries
        assert summarizer is not provider and summarizer.model == provider.model


async def test_current_tokens_are_reported_prompt_plus_messages_since(
    llm_server: OpenAIServer,
) -> None:
    llm_server.enqueue(Text("Here is my answer.", prompt_tokens=5000))
    chat = conversation(task_start())
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider)
        assert manager.current_tokens(chat) == counter().count_messages(chat.messages)
        await manager.evaluate_and_summarize(chat)
        completion = await provider.complete(chat.messages)
        chat.append(completion.message)
        assert completion.usage is not None
        manager.record_usage(completion.usage.prompt_tokens, chat)
        expected = 5000 + counter().count_message(completion.message)
        assert manager.current_tokens(chat) == expected
        follow_up = user("thanks, now run the tests")
        chat.append(follow_up)
        assert manager.current_tokens(chat) == expected + counter().count_message(follow_up)


async def test_warning_once_per_crossing_and_usage_after_each_evaluation(
    llm_server: OpenAIServer,
) -> None:
    events: list[ContextEvent] = []
    chat = conversation(task_start())
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, ContextSettings(max_tokens=1000), events=events)
        for reported in (849, 850, 900, 700, 860):
            manager.record_usage(reported, chat)
            await manager.evaluate_and_summarize(chat)
    warnings = of(ContextWarning, events)
    assert [w.current_tokens for w in warnings] == [850, 860]
    assert warnings[0].threshold == 0.85 and warnings[0].max_tokens == 1000
    assert [u.current_tokens for u in of(ContextUsage, events)] == [849, 850, 900, 700, 860]
    assert llm_server.requests == []


def auto_settings(**changes: object) -> ContextSettings:
    values: dict[str, object] = {
        "max_tokens": 10_000,
        "threshold_trigger": 0.95,
        "tool_call_summaries": True,
        "observation_masking": False,
    }
    values.update(changes)
    return ContextSettings(**values)  # type: ignore[arg-type]


async def test_auto_summary_runs_at_the_auto_threshold_even_without_a_trigger(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("I built every part with make.")
    for reported, expect_run in ((8999, False), (9000, True)):
        events: list[ContextEvent] = []
        chat = conversation(task_start(), steps(8))
        async with provider_for(llm_server) as provider:
            manager = make_manager(provider, auto_settings(), events=events)
            manager.record_usage(reported, chat)
            await manager.evaluate_and_summarize(chat)
        started = of(SummarizationStarted, events)
        assert bool(started) is expect_run
        if expect_run:
            assert [s.strategy for s in started] == ["threshold"]
            assert started[0].trigger is Trigger.AUTO and started[0].model == "main-model"
            completed = of(SummarizationCompleted, events)[0]
            assert completed.run_id == started[0].run_id
            assert completed.tokens_after < completed.tokens_before == reported
            assert completed.llm_calls == 1
            # ... plus the work ledger pinned after the summary (ADR 0050), scaled like the
            # rest by the server's report
            ledger = next(m for m in chat.messages if m.kind is MessageKind.LEDGER)
            pinned = manager.counter.count_message(ledger)
            assert completed.tokens_after + pinned <= manager.current_tokens(chat) < 9000
        assert chat.is_valid()


async def tool_calls_then_threshold(
    llm_server: OpenAIServer,
) -> tuple[list[ContextEvent], Conversation, list[str]]:
    """Ten old tool-call groups and a prompt over 80 % of a 2,500-token budget: both the
    tool-call and the threshold strategy run in one evaluation. Returns the events, the
    conversation and the manager's strategy order."""
    llm_server.responder = lambda request: Text("short note")
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(10), filler(20), steps(4, size=400, marker="t"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, llm_tiers(max_tokens=2500), events=events)
        await manager.evaluate_and_summarize(chat)
    return events, chat, [strategy.name for strategy in manager.strategies]


async def test_strategies_run_in_order_tool_call_then_threshold(
    llm_server: OpenAIServer,
) -> None:
    events, chat, order = await tool_calls_then_threshold(llm_server)
    assert order == [
        "ingest_cap",
        "masking",
        "image_masking",
        "tool_call",
        "instructions",
        "threshold",
        "goal_batch",
    ]
    started = of(SummarizationStarted, events)
    assert [s.strategy for s in started][:2] == ["tool_call", "threshold"]
    assert started[0].items == 10
    progress = [p for p in of(SummarizationProgress, events) if p.strategy == "tool_call"]
    assert [p.done for p in progress] == list(range(1, 11))
    assert {p.run_id for p in progress} == {started[0].run_id}
    assert chat.is_valid()


async def test_threshold_start_and_progress_count_the_same_items(
    llm_server: OpenAIServer,
) -> None:
    events, _, _ = await tool_calls_then_threshold(llm_server)
    started = [s for s in of(SummarizationStarted, events) if s.strategy == "threshold"]
    progress = [p for p in of(SummarizationProgress, events) if p.strategy == "threshold"]
    assert started and progress
    assert {p.total for p in progress} == {started[0].items}
    assert progress[-1].done == started[0].items


async def test_failure_at_the_auto_threshold_falls_back_without_another_call(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "overloaded"}})
    events: list[ContextEvent] = []
    head = task_start()
    latest = user("keep going")
    chat = conversation(head, steps(30), latest, steps(2, marker="n"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, auto_settings(), events=events)
        manager.record_usage(9500, chat)
        await manager.evaluate_and_summarize(chat)
    started = of(SummarizationStarted, events)
    failed = of(SummarizationFailed, events)
    assert [f.strategy for f in failed] == ["tool_call"]
    assert "ServerError" in failed[0].error and "overloaded" in failed[0].error
    assert failed[0].fallback is not None and "tool outputs pruned" in failed[0].fallback
    assert failed[0].tokens_after < failed[0].tokens_before
    # one attempt and its one retry (context.summary_max_retries); the breaker then skipped
    # the run's other groups, and the fallback that followed made no request
    # the first batch (5 at once) and one retry each; the other groups were never sent
    assert len(llm_server.requests) == 2 * 5 < started[0].items
    assert manager.current_tokens(chat) < 9000
    assert chat[0] is head[0] and chat[1] is head[1] and latest in chat.messages
    assert chat.is_valid()


async def test_fallback_ladder_alone_makes_no_request(llm_server: OpenAIServer) -> None:
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(30), user("continue"), steps(2))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, auto_settings(), events=events, strategies=[])
        manager.record_usage(9600, chat)
        await manager.evaluate_and_summarize(chat)
    assert llm_server.requests == []
    completed = of(SummarizationCompleted, events)
    assert [(c.strategy, c.model, c.llm_calls) for c in completed] == [("fallback", "none", 0)]
    assert completed[0].items > 0
    assert manager.current_tokens(chat) <= 0.95 * 0.9 * 10_000
    assert any(m.kind is MessageKind.PRUNED for m in chat.messages)
    assert chat.is_valid()


async def test_no_compaction_loop_when_runs_free_less_than_five_percent(
    llm_server: OpenAIServer,
) -> None:
    # Most tokens sit in the protected pending task and the recent tail; the old steps are
    # small, and their summary comes back too long to apply.
    llm_server.responder = lambda request: Text(words(2000, "long"))
    events: list[ContextEvent] = []
    chat = conversation(
        task_start("the task: " + words(13_000)),
        [assistant(f"step {n}: " + words(120)) for n in range(4)],
        user("status?"),
        assistant("recent work: " + words(5_500)),
    )
    async with provider_for(llm_server) as provider:
        settings = ContextSettings(max_tokens=20_000, user_instruction_share=1.0)
        manager = make_manager(provider, settings, events=events)
        assert manager.current_tokens(chat) >= 0.9 * 20_000
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 1
        failed = of(SummarizationFailed, events)
        assert "skipped" in failed[0].error and failed[0].fallback is not None
        await manager.evaluate_and_summarize(chat)
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 1  # paused: no loop of useless calls
        assert len(of(SummarizationStarted, events)) == 1
        # new material worth more than 5 % of the budget resumes automatic compaction
        chat.append(assistant("more work: " + words(600)))
        chat.append(assistant("and more: " + words(600)))
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 2
    assert chat.is_valid()


async def test_partial_failure_reports_first_error_and_keeps_successes(
    llm_server: OpenAIServer,
) -> None:
    def respond(request):  # type: ignore[no-untyped-def]
        return Text("") if "s03 " in request.text() else Text("ok")  # "" fails that group only

    llm_server.responder = respond
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(10), filler(20))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, events=events)
        await manager.evaluate_and_summarize(chat)
    failed = of(SummarizationFailed, events)
    assert len(failed) == 1
    assert failed[0].items_applied == 9 and "EmptySummaryError" in failed[0].error
    assert failed[0].fallback is None  # far below the budget: nothing to prune
    assert sum(1 for m in chat.messages if m.kind is MessageKind.SUMMARY) == 9
    assert chat.is_valid()


async def test_compact_is_manual_and_passes_instructions(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("Compacted: I built parts 0-7.")
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(8), user("next"), steps(1))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, events=events)
        await manager.compact(chat, "keep the make targets")
    started = of(SummarizationStarted, events)
    assert [(s.strategy, s.trigger) for s in started] == [("threshold", Trigger.MANUAL)]
    assert "keep the make targets" in llm_server.requests[0].text()
    assert any(m.kind is MessageKind.SUMMARY for m in chat.messages)
    assert isinstance(events[-1], ContextUsage)


async def test_overflow_compaction_falls_back_when_the_summarizer_fails(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "down"}})
    chat: Conversation = conversation(task_start(), steps(20), user("go"), steps(1))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider)
        before = manager.current_tokens(chat)
        await manager.compact(chat, trigger=Trigger.OVERFLOW)
        assert manager.current_tokens(chat) <= 0.75 * before
    assert chat.is_valid()


async def test_a_cancelled_evaluation_leaves_the_conversation_untouched(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("late summary", delay=0.5)
    chat = conversation(task_start(), steps(10), filler(20))
    before = [m.id for m in chat.messages]
    async with provider_for(llm_server) as provider:
        started = asyncio.Event()
        manager = make_manager(
            provider,
            emit=lambda event: started.set() if isinstance(event, SummarizationStarted) else None,
        )
        work = asyncio.create_task(manager.evaluate_and_summarize(chat))
        await started.wait()
        await asyncio.sleep(0.1)  # the summary requests are in flight (the server waits 0.5 s)
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work
        assert [m.id for m in chat.messages] == before
        assert chat.is_valid()
        llm_server.responder = lambda request: Text("ok")
        await manager.evaluate_and_summarize(chat)  # the lock was released
    assert any(m.kind is MessageKind.SUMMARY for m in chat.messages)


async def test_usage_is_the_last_reported_prompt_never_the_billed_total(
    llm_server: OpenAIServer,
) -> None:
    llm_server.enqueue(Text("first answer", prompt_tokens=5000), Text("second", prompt_tokens=6000))
    chat = conversation(task_start())
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider)
        for _ in range(2):
            await manager.evaluate_and_summarize(chat)
            completion = await provider.complete(chat.messages)
            assert completion.usage is not None
            manager.record_usage(completion.usage.prompt_tokens, chat)  # before the append
            chat.append(completion.message)
            chat.append(user("go on"))
        new = counter().count_message(chat[-2]) + counter().count_message(chat[-1])
        assert manager.current_tokens(chat) == 6000 + new  # not 5000 + 6000 + ...


async def test_a_failing_summarizer_is_not_called_again_before_every_request(
    llm_server: OpenAIServer,
) -> None:
    def respond(request):  # type: ignore[no-untyped-def]
        if "s00 " in request.text():
            return Text("")  # this group's summary fails; the model itself works
        return Text("I ran make.")

    llm_server.responder = respond
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(10), filler(20))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, events=events)
        await manager.evaluate_and_summarize(chat)
        assert len(llm_server.requests) == 10
        # the next steps of the agent: the failed group soon lies max_tool_call_distance back
        for _ in range(15):
            chat.append(assistant("working"))
            await manager.evaluate_and_summarize(chat)
    assert len(llm_server.requests) == 10
    assert len(of(SummarizationStarted, events)) == 1
    assert len(of(SummarizationFailed, events)) == 1
