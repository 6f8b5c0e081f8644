"""The agent loop against the loopback server: multi-step tool use, turn endings, questions,
usage, context events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge.agent.events import (
    AssistantMessageDone,
    MessageDelta,
    QuestionAsked,
    ReasoningDelta,
    SummarizationCompleted,
    SummarizationStarted,
    ToolCallFinished,
    ToolCallStarted,
    UsageEvent,
)
from forge.agent.turn.answers import NO_USER_ANSWER
from forge.agent.turn.loop import SKIPPED_RESULT
from tests.agent.loop_harness import (
    KeepLastTurnContextManager,
    drive,
    finished,
    make_agent,
    make_provider,
    of_type,
    with_manager,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def tool_messages(request_messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in request_messages if m["role"] == "tool"]


async def test_multi_step_tool_use_reads_writes_and_completes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "notes.txt"})], text="Reading first."),
        ToolCalls([Call("write_file", {"path": "upper.txt", "content": "ALPHA\nBETA\n"})]),
        ToolCalls([Call("task_completion", {"result": "Wrote upper.txt"})]),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("upper-case notes.txt into upper.txt"))

    assert finished(events).reason == "completed"
    assert finished(events).final_text == "Wrote upper.txt"
    assert (workspace / "upper.txt").read_text() == "ALPHA\nBETA\n"
    started = [event.call.name for event in of_type(events, ToolCallStarted)]
    assert started == ["read_file", "write_file", "task_completion"]
    assert "".join(event.text for event in of_type(events, MessageDelta)) == "Reading first."
    # The second request carried the file's content as the read_file result.
    assert len(llm_server.requests) == 3
    second_results = tool_messages(llm_server.requests[1].messages)
    assert "alpha" in second_results[0]["content"]
    # Every request offered the tools, and the system prompt came first.
    assert {t["function"]["name"] for t in llm_server.requests[0].tools} >= {
        "read_file",
        "task_completion",
    }
    assert llm_server.requests[0].messages[0]["role"] == "system"
    assert agent.conversation.is_valid()
    roles = [message.role for message in agent.conversation]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "tool",
    ]


async def test_plain_answer_ends_the_turn_and_reports_usage(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("Hi there", reasoning="thinking", prompt_tokens=100, completion_tokens=7),
        Text("Again", prompt_tokens=150, completion_tokens=3),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        first = await drive(agent.run_turn("hello"))
        second = await drive(agent.run_turn("and again"))

    assert finished(first).reason == "answered"
    assert finished(first).final_text == "Hi there"
    assert "".join(e.text for e in of_type(first, ReasoningDelta)) == "thinking"
    done = of_type(first, AssistantMessageDone)[0]
    assert done.message.reasoning == "thinking"
    usage = of_type(second, UsageEvent)[0]
    assert usage.usage.prompt_tokens == 150
    assert usage.session_prompt_tokens == 250
    assert usage.session_completion_tokens == 10
    # The second request holds the whole first exchange.
    contents = [m["content"] for m in llm_server.requests[1].messages]
    assert contents[1:] == ["hello", "Hi there", "and again"]


async def test_converse_answers_and_keeps_the_call_in_the_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("converse", {"message": "Sure, I can help."})]))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("can you help?"))

    assert finished(events).reason == "answered"
    assert finished(events).final_text == "Sure, I can help."
    last = agent.conversation[-1]
    assert last.role == "tool" and last.name == "converse"
    assert agent.conversation.is_valid()


async def test_calls_after_a_loop_breaking_call_are_skipped_with_a_result(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("task_completion", {"result": "done early"}),
                Call("write_file", {"path": "late.txt", "content": "x"}),
            ]
        )
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("finish"))

    assert finished(events).reason == "completed"
    assert not (workspace / "late.txt").exists()
    assert agent.conversation[-1].content == SKIPPED_RESULT
    assert agent.conversation.is_valid()


async def test_question_answer_becomes_the_tool_result(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [Call("ask_question", {"question": "Which colour?", "suggestions": ["red", "blue"]})]
        ),
        ToolCalls([Call("task_completion", {"result": "painted blue"})]),
    )
    asked: list[QuestionAsked] = []

    def answer(question: QuestionAsked) -> str:
        asked.append(question)
        return "blue"

    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("paint it"), answer=answer)

    assert asked[0].question == "Which colour?"
    assert asked[0].suggestions == ("red", "blue")
    assert finished(events).reason == "completed"
    results = tool_messages(llm_server.requests[1].messages)
    assert results[-1]["content"] == "blue"


async def test_question_without_a_user_gets_decide_yourself(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("ask_question", {"question": "Which colour?"})]),
        Text("I chose blue."),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, ask_user=False)
        events = await drive(agent.run_turn("paint it"))

    assert not of_type(events, QuestionAsked)
    assert of_type(events, ToolCallFinished)[0].result == NO_USER_ANSWER
    assert tool_messages(llm_server.requests[1].messages)[-1]["content"] == NO_USER_ANSWER
    assert finished(events).reason == "answered"


async def test_circuit_breaker_ends_a_turn_after_five_identical_errors(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.responder = lambda request: ToolCalls([Call("read_file", {"path": "missing.txt"})])
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("read it"))

    assert finished(events).reason == "circuit_breaker"
    results = of_type(events, ToolCallFinished)
    assert len(results) == 5 and all(result.is_error for result in results)
    assert len(llm_server.requests) == 5
    assert agent.conversation.is_valid()


async def test_different_errors_do_not_trip_the_breaker(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    paths = iter(f"missing-{number}.txt" for number in range(6))
    llm_server.responder = lambda request: ToolCalls(
        [Call("read_file", {"path": next(paths, "x")})]
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, max_llm_calls=6)
        events = await drive(agent.run_turn("read them"))

    assert finished(events).reason == "max_turns"
    assert len(of_type(events, ToolCallFinished)) == 6


async def test_max_llm_calls_ends_the_turn(llm_server: OpenAIServer, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.responder = lambda request: ToolCalls([Call("read_file", {"path": "a.txt"})])
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, max_llm_calls=3)
        events = await drive(agent.run_turn("loop forever"))

    assert finished(events).reason == "max_turns"
    assert len(llm_server.requests) == 3
    assert agent.conversation.is_valid()


async def test_unknown_tools_and_bad_arguments_become_error_results(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("frobnicate", {}), Call("read_file", "{not json")]),
        Text("giving up"),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("do it"))

    results = of_type(events, ToolCallFinished)
    assert [result.is_error for result in results] == [True, True]
    assert "unknown tool" in results[0].result
    sent = tool_messages(llm_server.requests[1].messages)
    assert [m["tool_call_id"] for m in sent] == [r.call.id for r in results]
    assert finished(events).reason == "answered"


async def test_context_manager_runs_before_every_call_and_its_events_reach_the_client(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "a.txt"})]),
        Text("first done"),
        Text("second done"),
        Text("third done"),
    )
    async with make_provider(llm_server) as provider:
        agent, manager = with_manager(
            provider, workspace, lambda emit: KeepLastTurnContextManager(provider, emit=emit)
        )
        await drive(agent.run_turn("one"))
        assert manager.evaluations == 2
        await drive(agent.run_turn("two"))
        compaction = await drive(agent.compact("keep it short"))
        assert [type(e) for e in compaction] == [SummarizationStarted, SummarizationCompleted]
        events = await drive(agent.run_turn("three"))

    assert finished(events).reason == "answered"
    sent = llm_server.requests[-1].messages
    assert sent[1]["content"] == "[summary of 4 messages]"
    assert "first done" not in json.dumps(sent)
    assert [m["content"] for m in sent[2:]] == ["two", "second done", "three"]
    assert agent.conversation.is_valid()
