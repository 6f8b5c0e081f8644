"""The plan survives every compaction: a real agent, the real context manager and the loopback
server; every prompt the server receives after the first `update_plan` holds the current plan
exactly once, right after the latest user message, and no `update_plan` call (docs/adr/0028)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from pathlib import Path

from forge.agent.events import AgentEvent, SummarizationCompleted, SummarizationStarted
from forge.agent.history.session_file import SessionStore
from forge.agent.turn.loop import Agent
from forge.config.settings import ContextSettings
from forge.context.conversation import find_problems
from forge.context.manager import Manager
from forge.context.plan import PLAN_HEADER, PLAN_TOOL, checklist, parse_plan
from forge.context.plan_pin import current_plan
from forge.llm.messages import MessageKind
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.agent.loop_harness import (
    drive,
    finished,
    make_agent,
    make_provider,
    of_type,
    with_manager,
)
from tests.context.builders import counter, llm_tiers, provider_for
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

FIRST = [
    {"step": "Read the sources", "status": "in_progress"},
    {"step": "Fix the parser", "status": "pending"},
    {"step": "Run the tests", "status": "pending"},
]
SECOND = [
    {"step": "Read the sources", "status": "done"},
    {"step": "Fix the parser", "status": "in_progress"},
    {"step": "Run the tests", "status": "pending"},
]
THIRD = [
    {"step": "Read the sources", "status": "done"},
    {"step": "Fix the parser", "status": "done"},
    {"step": "Run the tests", "status": "in_progress"},
]


def plan_call(plan: list[dict[str, str]]) -> ToolCalls:
    return ToolCalls([Call(PLAN_TOOL, {"plan": plan})])


def read(path: str) -> ToolCalls:
    return ToolCalls([Call("read_file", {"path": path})], text=f"Reading {path}.")


class Script:
    """Answers the agent's requests from `replies`, in order, and every summarization request
    with `summary`; remembers which plan each agent request should carry."""

    def __init__(self, server: OpenAIServer, summary: Reply | None = None) -> None:
        self.replies: deque[Reply] = deque()
        self.summary = summary or Text("I read the sources and noted what the parser does.")
        self.expected: list[tuple[str, list[dict[str, str]] | None]] = []
        """(latest user text, newest plan) for each agent request, in order."""
        self._user = ""
        self._plan: list[dict[str, str]] | None = None
        server.usage_mode = "none"  # the local count alone: thresholds cross where computed
        server.responder = self

    def turn(self, user_text: str, *replies: Reply) -> str:
        self._pending_user = user_text
        self.replies.extend(replies)
        return user_text

    def __call__(self, request: RecordedRequest) -> Reply:
        if request.model == SUMMARIZER:
            return self.summary
        self.expected.append((self._pending_user, self._plan))
        reply = self.replies.popleft() if self.replies else Text("Done.")
        if isinstance(reply, ToolCalls):
            for call in reply.calls:
                if call.name == PLAN_TOOL and isinstance(call.arguments, dict):
                    self._plan = call.arguments["plan"]
        return reply


def assert_plan_pinned(requests: Sequence[RecordedRequest], script: Script) -> int:
    """Every agent request holds its expected plan once, right after its latest user message,
    and no update_plan call; returns how many requests carried a plan."""
    assert len(requests) == len(script.expected)
    carried = 0
    for number, (request, (user_text, plan)) in enumerate(
        zip(requests, script.expected, strict=True)
    ):
        messages = request.messages
        pinned = [
            i
            for i, m in enumerate(messages)
            if m["role"] == "user" and str(m["content"]).startswith(PLAN_HEADER)
        ]
        calls = [c for m in messages for c in m.get("tool_calls") or ()]
        assert all(c["function"]["name"] != PLAN_TOOL for c in calls), number
        for m in messages:
            if m["role"] == "assistant":
                assert m["content"] or m.get("tool_calls"), f"empty assistant in {number}"
        if plan is None:
            assert pinned == [], number
            continue
        carried += 1
        assert len(pinned) == 1, f"request {number}: {len(pinned)} plan messages"
        latest = max(
            i for i, m in enumerate(messages) if m["role"] == "user" and m["content"] == user_text
        )
        assert pinned[0] == latest + 1, f"request {number}: plan not right after the user"
        assert messages[pinned[0]]["content"] == f"{PLAN_HEADER}\n{checklist(parse_plan(plan))}"
    return carried


def write_sources(workspace: Path, count: int = 8, lines: int = 30) -> None:
    for number in range(count):
        text = "".join(
            f"def function_{number}_{line}(value): return value * {line}  # parser helper\n"
            for line in range(lines)
        )
        (workspace / f"f{number}.py").write_text(text)


def agent_with_manager(
    provider: OpenAICompatibleProvider, workspace: Path, settings: ContextSettings
) -> tuple[Agent, Manager]:
    return with_manager(
        provider,
        workspace,
        lambda emit: Manager(
            settings,
            provider,
            counter(),
            context_window=1_000_000,
            summarization_model=SUMMARIZER,
            emit=emit,
        ),
    )


async def run_turn(agent: Agent, text: str) -> list[AgentEvent]:
    events = await drive(agent.run_turn(text))
    assert finished(events).reason == "answered"
    assert find_problems(agent.conversation.messages) == []
    return events


def strategies_that_ran(events: Sequence[AgentEvent]) -> list[str]:
    return [event.strategy for event in of_type(events, SummarizationCompleted)]


def one_long_turn(script: Script) -> str:
    return script.turn(
        "Fix the parser in f*.py",
        plan_call(FIRST),
        read("f0.py"),
        read("f1.py"),
        read("f2.py"),
        plan_call(SECOND),
        read("f3.py"),
        read("f4.py"),
        read("f5.py"),
        plan_call(THIRD),
        read("f6.py"),
        read("f7.py"),
        Text("The parser is fixed."),
    )


async def test_the_plan_survives_tool_call_summaries(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server)
    text = one_long_turn(script)
    settings = llm_tiers(messages_old_threshold=2, min_tool_calls_to_summarize=2)
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, settings)
        events = await run_turn(agent, text)
    assert "tool_call" in strategies_that_ran(events)
    assert any(m.kind is MessageKind.SUMMARY for m in agent.conversation)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) >= 10
    assert llm_server.requests_for(SUMMARIZER), "summaries were requested"


async def test_the_plan_survives_threshold_summaries(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server)
    text = one_long_turn(script)
    settings = llm_tiers(tool_call_summaries=False, max_tokens=4500)
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, settings)
        events = await run_turn(agent, text)
    assert "threshold" in strategies_that_ran(events)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) >= 10


async def test_the_plan_survives_the_auto_summary_near_the_limit(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server)
    text = one_long_turn(script)
    # The threshold strategy never fires by itself: only the auto-summary at 90 % runs it.
    settings = llm_tiers(
        tool_call_summaries=False,
        max_tokens=4500,
        threshold_trigger=1.0,
        warning_threshold=0.85,
        auto_summary_threshold=0.9,
    )
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, settings)
        events = await run_turn(agent, text)
    started = of_type(events, SummarizationStarted)
    assert started and all(e.current_tokens * 10 >= e.max_tokens * 9 for e in started)
    assert strategies_that_ran(events)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) >= 10


async def test_the_plan_survives_the_pruning_fallback(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server, summary=Fault(500, {"error": {"message": "summarizer down"}}))
    text = one_long_turn(script)
    settings = llm_tiers(tool_call_summaries=False, max_tokens=4500, summary_max_retries=0)
    async with provider_for(llm_server, MAIN) as provider:
        agent, manager = agent_with_manager(provider, workspace, settings)
        await run_turn(agent, text)
    assert any(m.kind is MessageKind.PRUNED for m in agent.conversation)
    assert not any(m.kind is MessageKind.SUMMARY for m in agent.conversation)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) >= 10
    assert manager.current_tokens(agent.conversation) <= 4500


async def test_the_plan_survives_a_goal_batch_and_follows_the_latest_user_message(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server)
    settings = llm_tiers(tool_call_summaries=False, goal_batch_age=2, goal_batch_min_turns=2)
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, settings)
        seen: list[AgentEvent] = []
        turns = [
            ("Fix the parser", [plan_call(FIRST), read("f0.py"), read("f1.py")]),
            ("Now the lexer", [plan_call(SECOND), read("f2.py"), read("f3.py")]),
            ("And the printer", [read("f4.py"), plan_call(THIRD), read("f5.py")]),
            ("Last, the docs", [read("f6.py")]),
        ]
        for number, (text, replies) in enumerate(turns):
            script.turn(text, *replies, Text(f"Finished part {number}."))
            seen += await run_turn(agent, text)
    assert "goal_batch" in strategies_that_ran(seen)
    assert any(m.kind is MessageKind.GOAL_BATCH for m in agent.conversation)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) >= 12


async def test_a_resumed_session_keeps_the_plan(
    llm_server: OpenAIServer, workspace: Path, tmp_path: Path
) -> None:
    write_sources(workspace)
    script = Script(llm_server)
    store = SessionStore(tmp_path / "sessions")
    log = store.create(workspace, MAIN)
    text = script.turn(
        "Fix the parser", plan_call(FIRST), read("f0.py"), plan_call(SECOND), Text("Half done.")
    )
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, llm_tiers())
        log.attach(agent.conversation)
        await run_turn(agent, text)

        conversation, log = store.resume(log.id)
        assert current_plan(conversation.messages) == parse_plan(SECOND)
        assert [m.kind for m in conversation].count(MessageKind.PLAN) == 1
        resumed, _ = with_manager(
            provider,
            workspace,
            lambda emit: Manager(
                llm_tiers(),
                provider,
                counter(),
                context_window=1_000_000,
                summarization_model=SUMMARIZER,
                emit=emit,
            ),
            conversation=conversation,
        )
        log.attach(resumed.conversation)
        text = script.turn("Carry on", read("f1.py"), Text("All done."))
        await run_turn(resumed, text)
    assert assert_plan_pinned(llm_server.requests_for(MAIN), script) == 5
    again = store.load(log.id)
    assert current_plan(again.messages) == parse_plan(SECOND)


async def test_a_turn_retried_after_a_failed_call_is_not_sent_twice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    script = Script(llm_server)
    text = script.turn("Fix the parser", plan_call(FIRST), Text("Planned."))
    async with provider_for(llm_server, MAIN) as provider:
        agent, _ = agent_with_manager(provider, workspace, llm_tiers())
        await run_turn(agent, text)
        llm_server.enqueue(Fault(500, {"error": {"message": "down"}}))
        failed = await drive(agent.run_turn("Carry on"))
        assert finished(failed).reason == "error"
        assert agent.conversation[-1].kind is MessageKind.PLAN  # pinned after "Carry on"
        script.turn("Carry on", Text("Done."))
        await run_turn(agent, "Carry on")  # sent again (Up, Enter): the same message
    contents = [m.content for m in agent.conversation if m.role == "user"]
    assert contents.count("Carry on") == 1
    last = llm_server.requests_for(MAIN)[-1].messages
    assert [m["content"] for m in last if m["role"] == "user"][-2:] == [
        "Carry on",
        f"{PLAN_HEADER}\n{checklist(parse_plan(FIRST))}",
    ]


async def test_codex_style_statuses_are_accepted_and_normalised(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    from forge.agent.events import ToolCallFinished

    codex = [
        {"step": "Read the sources", "status": "completed"},
        {"step": "Fix the parser", "status": "in-progress"},
        {"step": "Run the tests", "status": "pending"},
    ]
    llm_server.enqueue(plan_call(codex), Text("planned"))
    agent = make_agent(make_provider(llm_server), workspace)
    events = await drive(agent.run_turn("plan it"))
    (result,) = of_type(events, ToolCallFinished)
    assert not result.is_error, result.result
    assert result.metadata["plan"] == SECOND
    assert parse_plan([{"step": "x", "status": "In Progress"}])[0].status.value == "in_progress"
