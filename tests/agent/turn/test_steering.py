"""Steering (issue 40): a message sent during a turn is added to it as a user message after
the running tool call returns and before the next request — verbatim, in a valid message
list — and a turn whose model answered meanwhile goes on for it (docs/adr/0057)."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from forge.agent.events import AgentEvent, SteeringAdded, ToolCallStarted, TurnFinished
from forge.agent.turn.steering import STEERED_KEY
from tests.agent.loop_harness import make_agent, make_provider
from tests.agent.test_exit_signals import assert_valid_request
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

STEER = "stop, use the *other* API\n  (v2)"


async def test_a_steered_message_reaches_the_very_next_request(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "sleep 1; echo slept"})]),
        Text("switched to v2"),
    )
    provider = make_provider(llm_server)
    agent = make_agent(provider, workspace)
    agent.policy.approve_always("execute_command")
    assert not agent.steer("no turn runs")  # nothing to steer into: the caller sends it
    events: list[AgentEvent] = []
    try:
        async for event in agent.run_turn("call the API"):
            events.append(event)
            if isinstance(event, ToolCallStarted):  # the command runs now
                assert agent.steer(STEER)
    finally:
        await provider.aclose()

    added = [event for event in events if isinstance(event, SteeringAdded)]
    assert [event.text for event in added] == [STEER]
    assert len(llm_server.requests) == 2
    sent = llm_server.requests[1].messages
    assert_valid_request(sent)
    assert sent[-2]["role"] == "tool" and "slept" in str(sent[-2]["content"])
    assert sent[-1] == {"role": "user", "content": STEER}
    message = agent.conversation.messages[-2]
    assert message.id == added[0].message_id and message.meta[STEERED_KEY] is True


async def test_a_message_steered_during_the_answer_makes_the_turn_go_on(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer", chunk_size=2, chunk_delay=0.01), Text("second"))
    provider = make_provider(llm_server)
    agent = make_agent(provider, workspace)
    try:
        events: list[AgentEvent] = []
        async for event in agent.run_turn("hello"):
            events.append(event)
            if len(events) == 1:
                assert agent.steer("and in French")
    finally:
        await provider.aclose()
    assert len(llm_server.requests) == 2
    assert llm_server.requests[1].messages[-1] == {"role": "user", "content": "and in French"}
    last = events[-1]
    assert isinstance(last, TurnFinished)
    assert last.reason == "answered" and last.final_text == "second"


async def test_steering_left_when_a_turn_ends_is_handed_back(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": "sleep 30"})]))
    provider = make_provider(llm_server)
    agent = make_agent(provider, workspace)
    agent.policy.approve_always("execute_command")

    async def consume() -> None:
        async for event in agent.run_turn("wait"):
            if isinstance(event, ToolCallStarted):
                agent.steer("never added")
                raise asyncio.CancelledError  # the user pressed Esc

    try:
        with contextlib.suppress(asyncio.CancelledError):
            await consume()
    finally:
        await provider.aclose()
    assert agent.steering.take() == ["never added"]
    assert all(message.content != "never added" for message in agent.conversation.messages)
