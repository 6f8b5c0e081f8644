"""Cancelling the consuming task at any point leaves a valid conversation, and the session
goes on: mid-stream, mid-command, waiting for approval, waiting for an answer."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import (
    AgentEvent,
    ApprovalRequested,
    MessageDelta,
    QuestionAsked,
    SummarizationStarted,
    ToolCallStarted,
    ToolOutputDelta,
    Trigger,
)
from forge.agent.turn.interruption import NOT_RUN_RESULT, UNANSWERED_QUESTION_RESULT
from forge.context.conversation import CANCELLED_RESULT, Conversation
from forge.context.events import EventSink
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.agent.loop_harness import (
    KeepLastTurnContextManager,
    consume_until,
    drive,
    finished,
    make_agent,
    make_provider,
    with_manager,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


async def cancel_when(task: asyncio.Task[list[AgentEvent]], reached: asyncio.Event) -> None:
    await reached.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_cancel_mid_stream_keeps_the_partial_answer(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    long_text = "word " * 400
    llm_server.enqueue(Text(long_text, chunk_size=5, chunk_delay=0.01), Text("after"))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        task, reached, seen = await consume_until(
            agent.run_turn("talk"), lambda event: isinstance(event, MessageDelta)
        )
        await cancel_when(task, reached)

        assert agent.conversation.is_valid()
        partial = agent.conversation[-1]
        assert partial.role == "assistant" and partial.meta.get("partial") is True
        streamed = "".join(e.text for e in seen if isinstance(e, MessageDelta))
        assert partial.content.startswith(streamed) and partial.content != long_text
        assert partial.content.endswith("\n\n[interrupted by the user]"), "the model is told"
        # The session goes on: the next request carries the partial answer.
        events = await drive(agent.run_turn("go on"))
    assert finished(events).reason == "answered"
    sent = llm_server.requests[-1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]


async def test_cancel_mid_command_gives_the_call_a_cancelled_result(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    marker = workspace / "finished.txt"
    command = "echo started; sleep 30; touch finished.txt"
    llm_server.enqueue(
        ToolCalls(
            [
                Call("execute_command", {"command": command}),
                Call("write_file", {"path": "never.txt", "content": "x"}),
            ]
        ),
        Text("after"),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, policy=ApprovalPolicy(approve_all=True))
        task, reached, _ = await consume_until(
            agent.run_turn("run it"), lambda event: isinstance(event, ToolOutputDelta)
        )
        await cancel_when(task, reached)

        assert agent.conversation.is_valid()
        results = [m for m in agent.conversation if m.role == "tool"]
        # The running command was cut off; the write after it never started.
        assert [m.content for m in results] == [CANCELLED_RESULT, NOT_RUN_RESULT]
        assert [bool(m.meta.get("not_run")) for m in results] == [False, True]
        assert not (workspace / "never.txt").exists()
        events = await drive(agent.run_turn("never mind"))
    assert finished(events).reason == "answered"
    assert not marker.exists()


async def test_cancel_while_waiting_for_approval(llm_server: OpenAIServer, workspace: Path) -> None:
    llm_server.enqueue(ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        task, reached, seen = await consume_until(
            agent.run_turn("write"), lambda event: isinstance(event, ApprovalRequested)
        )
        await cancel_when(task, reached)

    request = next(event for event in seen if isinstance(event, ApprovalRequested))
    assert request.future.cancelled()  # a client's dialog learns it is moot
    assert not any(isinstance(event, ToolCallStarted) for event in seen)
    assert not (workspace / "x.txt").exists()
    assert agent.conversation.is_valid()
    assert agent.conversation[-1].content == NOT_RUN_RESULT, "it never ran"
    assert agent.conversation[-1].meta == {"cancelled": True, "not_run": True}


async def test_cancel_while_waiting_for_an_answer(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("ask_question", {"question": "Sure?"})]))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        task, reached, _ = await consume_until(
            agent.run_turn("ask me"), lambda event: isinstance(event, QuestionAsked)
        )
        await cancel_when(task, reached)
    assert agent.conversation.is_valid()
    assert agent.conversation[-1].name == "ask_question"
    assert agent.conversation[-1].content == UNANSWERED_QUESTION_RESULT


async def test_abandoning_a_turn_without_closing_it_is_settled_by_the_next(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]), Text("fine")
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        abandoned = agent.run_turn("write")
        async for event in abandoned:
            if isinstance(event, ApprovalRequested):
                break  # a careless client: neither answers nor closes the iterator
        events = await drive(agent.run_turn("forget that"))
        await abandoned.aclose()  # closing it late must not disturb the newer turn

    assert finished(events).reason == "answered"
    assert agent.conversation.is_valid()
    roles = [message.role for message in agent.conversation]
    assert roles == ["system", "user", "assistant", "tool", "user", "assistant"]


async def test_closing_a_suspended_turn_stops_the_running_command(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """The consumer is cancelled while busy with an event (the turn is suspended at a yield,
    not awaiting): closing the iterator must still stop the command before it returns."""
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": "echo $$; sleep 30"})]))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace, policy=ApprovalPolicy(approve_all=True))
        turn = agent.run_turn("run it")
        busy = asyncio.Event()
        output: list[str] = []

        async def consume() -> None:
            async for event in turn:
                if isinstance(event, ToolOutputDelta):
                    output.append(event.text)
                    busy.set()
                    await asyncio.sleep(60)  # busy with the event when cancelled

        task = asyncio.create_task(consume())
        await busy.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await turn.aclose()

    shell_pid = int("".join(output).split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)
    assert agent.conversation.is_valid()
    assert agent.conversation[-1].content == CANCELLED_RESULT


class SlowSummarizer(KeepLastTurnContextManager):
    """Starts a summarization before every call after the first and hangs in it (until
    `hang` is cleared); records whether its work was cancelled."""

    def __init__(self, provider: OpenAICompatibleProvider, *, emit: EventSink) -> None:
        super().__init__(provider, emit=emit)
        self.hang = True
        self.cancelled = False

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        await super().evaluate_and_summarize(conversation)
        if self.evaluations < 2 or not self.hang:
            return
        self.emit(SummarizationStarted("run-9", "slow", Trigger.AUTO, "m", 9, 10, 2))
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


async def test_cancel_during_summarization_stops_it_and_leaves_a_valid_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a")
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "a.txt"})]), Text("after"))
    async with make_provider(llm_server) as provider:
        agent, manager = with_manager(
            provider, workspace, lambda emit: SlowSummarizer(provider, emit=emit)
        )
        task, reached, _ = await consume_until(
            agent.run_turn("read"), lambda event: isinstance(event, SummarizationStarted)
        )
        await cancel_when(task, reached)

        assert manager.cancelled
        assert agent.conversation.is_valid()
        assert [m.role for m in agent.conversation] == ["system", "user", "assistant", "tool"]
        manager.hang = False
        events = await drive(agent.run_turn("go on"))
    assert finished(events).reason == "answered"
    assert len(llm_server.requests) == 2
