"""Every LLM summary run gets the prior summary, and each strategy's events count one unit:
started.items, the progress events' done/total and completed.items agree."""

from __future__ import annotations

from collections import defaultdict

from forge.context.events import (
    ContextEvent,
    SummarizationCompleted,
    SummarizationProgress,
    SummarizationStarted,
)
from forge.context.strategies import GoalBatchCompactionStrategy, ToolCallSummarizationStrategy
from forge.llm.messages import Message, MessageKind, assistant, user
from tests.context.builders import (
    conversation,
    filler,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    run_for,
    services,
    task_start,
    words,
)
from tests.support.openai_server import OpenAIServer, Text

PRIOR = "I already fixed the parser and noted the failing fixture."


def summary(text: str) -> Message:
    return Message(role="assistant", content=text, kind=MessageKind.SUMMARY)


def steps(count: int, size: int = 200, marker: str = "s") -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        output = words(size, f"{marker}{number:02d}") + "\nexit code: 0"
        messages.extend(group("execute_command", output, arguments={"command": f"make {number}"}))
    return messages


async def test_each_strategy_counts_one_unit_in_started_progress_and_completed(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("short note")
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(10), filler(20), steps(4, size=400, marker="t"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, llm_tiers(max_tokens=2500), events=events)
        await manager.evaluate_and_summarize(chat)
    runs: dict[str, list[ContextEvent]] = defaultdict(list)
    for event in events:
        run_id = getattr(event, "run_id", None)
        if run_id is not None:
            runs[run_id].append(event)
    checked = set()
    for run_events in runs.values():
        started = next(e for e in run_events if isinstance(e, SummarizationStarted))
        completed = [e for e in run_events if isinstance(e, SummarizationCompleted)]
        progress = [e for e in run_events if isinstance(e, SummarizationProgress)]
        if not completed or not progress:
            continue
        assert {p.total for p in progress} == {started.items}, started.strategy
        assert progress[-1].done == completed[0].items == started.items, started.strategy
        checked.add(started.strategy)
    assert checked == {"tool_call", "threshold"}


async def test_the_prior_summary_reaches_tool_call_summaries(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("I ran make.")
    chat = conversation(task_start(), summary(PRIOR), steps(10), filler(20))
    chosen = ToolCallSummarizationStrategy(services())
    async with provider_for(llm_server) as provider:
        assert await chosen.run(chat, provider, run_for([])) == 10
    assert len(llm_server.requests) == 10
    for request in llm_server.requests:
        assert f"<prior_summary>\n{PRIOR}\n</prior_summary>" in request.text()


async def test_the_prior_summary_reaches_goal_batches(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Text("The user asked to rename modules m1 to m3.")
    finished = [
        message
        for number in range(1, 4)
        for message in (
            user(f"request {number}: rename module m{number} " + words(40, "req")),
            summary(f"I renamed m{number}. " + words(160, "sum")),
        )
    ]
    chat = conversation(
        task_start(), summary(PRIOR), assistant("ok"), finished, user("now"), filler(24)
    )
    chosen = GoalBatchCompactionStrategy(services())
    events: list[ContextEvent] = []
    async with provider_for(llm_server) as provider:
        pending = chosen.pending_items(chat)
        done = await chosen.run(chat, provider, run_for(events))
    assert pending == done == 3
    progress = [(e.done, e.total) for e in events if isinstance(e, SummarizationProgress)]
    assert progress == [(3, 3)]
    assert len(llm_server.requests) == 1
    assert f"<prior_summary>\n{PRIOR}\n</prior_summary>" in llm_server.requests[0].text()
