"""The strategy runner and the one contract: the completion event carries the summary, a
failing summarizer falls back without touching the latest user messages, and the capabilities
alone decide how a strategy runs — all against the loopback server."""

from __future__ import annotations

from forge.config.settings import ContextSettings
from forge.context.conversation import Conversation
from forge.context.events import (
    ContextEvent,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    Trigger,
)
from forge.context.strategies import Capabilities, ContextStrategy, StrategyRun
from forge.context.strategies.threshold import ThresholdSummarizationStrategy
from forge.headless.jsonl import event_to_dict
from forge.llm.messages import Message, MessageKind, assistant, user
from forge.llm.protocols import Provider
from forge.llm.stream import RetryScheduled
from tests.context.builders import (
    conversation,
    group,
    llm_tiers,
    make_manager,
    provider_for,
    task_start,
    words,
)
from tests.support.openai_server import Fault, OpenAIServer, Text


def steps(count: int, marker: str = "s") -> list[Message]:
    messages: list[Message] = []
    for number in range(count):
        output = words(200, f"{marker}{number:02d}") + "\nexit code: 0"
        messages.extend(group("execute_command", output, arguments={"command": f"make {number}"}))
    return messages


def threshold_of(strategies: tuple[ContextStrategy, ...]) -> ContextStrategy:
    return next(s for s in strategies if isinstance(s, ThresholdSummarizationStrategy))


async def test_the_completion_event_carries_the_summary_it_put_in(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Text("Ran make 0-19; every part builds.")
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(20), user("now the docs"), steps(1, "n"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, events=events)
        await manager.compact(chat, "mention make")
    [completed] = [e for e in events if isinstance(e, SummarizationCompleted)]
    summaries = [m for m in chat.messages if m.kind is MessageKind.SUMMARY]
    assert completed.strategy == "threshold" and summaries
    assert completed.summary == "\n\n".join(m.content for m in summaries)
    assert "every part builds" in completed.summary
    assert completed.tokens_after < completed.tokens_before
    # forge run's jsonl record keeps the fields ADR 0015 lists: the summary is not one
    record = event_to_dict(completed)
    assert "summary" not in record
    assert list(record) == [
        "type", "run_id", "strategy", "model", "items", "tokens_before", "tokens_after",
        "duration_s", "llm_calls",
    ]  # fmt: skip


async def test_a_deterministic_run_completes_without_a_summary(llm_server: OpenAIServer) -> None:
    events: list[ContextEvent] = []
    chat = conversation(task_start(), steps(30), user("go on"))
    settings = ContextSettings(tool_call_summaries=False, observation_masking=True)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, settings, events=events)
        await manager.evaluate_and_summarize(chat)
    completed = [e for e in events if isinstance(e, SummarizationCompleted)]
    assert [(e.strategy, e.model, e.summary) for e in completed] == [("masking", "none", "")]
    assert not llm_server.requests


async def test_a_failing_summarizer_falls_back_and_keeps_the_latest_user_messages(
    llm_server: OpenAIServer,
) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "overloaded"}})
    events: list[ContextEvent] = []
    ask, then = user("fix the build"), user("and keep the logs short")
    chat = conversation(task_start(), steps(30), ask, steps(2, "n"), then)
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, llm_tiers(max_tokens=8_000), events=events)
        before = manager.current_tokens(chat)
        strategy = threshold_of(manager.strategies)
        completed = await manager.runner.run(strategy, chat, Trigger.MANUAL, force=True)
    assert completed is False
    # The summarizer's retries are told too (the provider's own event), between the two.
    kinds = [type(e) for e in events if not isinstance(e, SummarizationProgress | RetryScheduled)]
    assert kinds == [SummarizationStarted, SummarizationFailed]
    [failed] = [e for e in events if isinstance(e, SummarizationFailed)]
    assert "overloaded" in failed.error
    assert failed.fallback is not None and "tool outputs pruned" in failed.fallback
    assert failed.tokens_after < failed.tokens_before == before
    assert len(llm_server.requests) == 2  # one attempt and its retry; the fallback asks nothing
    assert ask in chat.messages and then in chat.messages and chat[-1] is then
    assert chat.is_valid()


class DropOldNotes(ContextStrategy):
    """A deterministic strategy written elsewhere: drops plain notes, in place of nothing."""

    name = "drop_notes"
    capabilities = Capabilities(forceable=True)

    def __init__(self) -> None:
        self.providers: list[Provider | None] = []

    def _notes(self, conversation: Conversation) -> list[int]:
        return [i for i, m in enumerate(conversation.messages) if m.content.startswith("note")]

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        return True

    def pending_items(
        self, conversation: Conversation, max_tokens: int, *, force: bool = False
    ) -> int:
        return len(self._notes(conversation))

    async def run(
        self, conversation: Conversation, provider: Provider | None, run: StrategyRun
    ) -> int:
        self.providers.append(provider)
        notes = self._notes(conversation)
        for index in reversed(notes):
            conversation.replace_range(index, index + 1, [])
        return len(notes)


async def test_capabilities_alone_decide_how_a_strategy_runs(llm_server: OpenAIServer) -> None:
    events: list[ContextEvent] = []
    strategy = DropOldNotes()
    chat = conversation(task_start(), assistant("note one"), assistant("note two"), user("go"))
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, events=events, strategies=[strategy])
        await manager.evaluate_and_summarize(chat)  # two notes: one run
        await manager.evaluate_and_summarize(chat)  # nothing pending: no run, no events
    assert strategy.providers == [None]  # not a summarizer: given no provider
    started = [e for e in events if isinstance(e, SummarizationStarted)]
    assert [(e.strategy, e.model, e.items) for e in started] == [("drop_notes", "none", 2)]
    assert [m.content for m in chat.messages][1:] == ["Fix the failing test in src/main.py", "go"]
    assert not llm_server.requests


class CountedConversation(Conversation):
    """A conversation that counts its full validity passes."""

    def __init__(self, messages: list[Message]) -> None:
        super().__init__(messages)
        self.passes = 0

    def problems(self) -> list[str]:
        self.passes += 1
        return super().problems()


async def test_back_to_back_runs_check_validity_once(llm_server: OpenAIServer) -> None:
    llm_server.responder = lambda request: Fault(500, {"error": {"message": "overloaded"}})
    chat = CountedConversation([*task_start(), *steps(30), user("go on"), *steps(2, "n")])
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, llm_tiers(max_tokens=8_000))
        strategy = threshold_of(manager.strategies)
        await manager.runner.run(strategy, chat, Trigger.MANUAL, force=True)
        # One pass before the failed run; the run changed nothing and the fallback after it
        # only replaced outputs in place, so no pass after either (there were four before).
        assert chat.passes == 1
        manager.runner.run_fallback(chat, Trigger.MANUAL)  # known valid still: no pass
        assert chat.passes == 1
    assert chat.is_valid()


async def test_a_run_that_moves_messages_is_checked_after_it(llm_server: OpenAIServer) -> None:
    chat = CountedConversation([*task_start(), assistant("note one"), user("go")])
    async with provider_for(llm_server) as provider:
        manager = make_manager(provider, strategies=[DropOldNotes()])
        await manager.runner.run(DropOldNotes(), chat, Trigger.AUTO)
    assert chat.passes == 2  # before (nothing known) and after (a message was removed)
    assert [m.content for m in chat.messages][-1] == "go"
