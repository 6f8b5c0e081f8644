"""Provider rows of the fault matrix not held elsewhere, through the real agent loop over
loopback HTTP: a 10 MB answer, a stream whose chunks carry no choices, and a malformed tool
call followed by the model's recovery. (401/403/404/429/5xx, Retry-After forms, stalls,
disconnects, `event: error`, missing `[DONE]`, unknown tools and bad arguments are in
tests/llm/ and tests/agent/test_loop*.py.) Each leaves a valid conversation and a session
that goes on."""

from __future__ import annotations

import json
from pathlib import Path

from forge.agent.events import TurnFinished
from forge.llm.messages import MessageKind
from tests.agent.loop_harness import drive, finished, make_agent, make_provider
from tests.support.openai_server import Call, OpenAIServer, Raw, Text, ToolCalls

TEN_MB = 10 * 1024 * 1024


def empty_choices_stream() -> bytes:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": []},
        {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [],
         "usage": {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}},
    ]  # fmt: skip
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


async def test_a_10_mb_answer_arrives_whole(llm_server: OpenAIServer, workspace: Path) -> None:
    answer = ("0123456789abcdef" * 64 + "\n") * (TEN_MB // 1025)
    llm_server.enqueue(Text(answer, chunk_size=65536), Text("still here"))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("write a lot"))
        assert finished(events).reason == "answered"
        assert agent.conversation.messages[-1].content == answer
        again = await drive(agent.run_turn("and again"))
    assert finished(again).reason == "answered"
    assert agent.conversation.is_valid()


async def test_a_stream_without_choices_leaves_no_empty_assistant_message(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Raw(empty_choices_stream()), Text("a real answer"))
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("hello"))
        assert isinstance(events[-1], TurnFinished)
        assert agent.conversation.is_valid()
        empty = [
            m
            for m in agent.conversation.messages
            if m.role == "assistant" and not m.content and not m.tool_calls
            and m.kind == MessageKind.NORMAL
        ]  # fmt: skip
        assert not empty
        again = await drive(agent.run_turn("try again"))
    assert finished(again).reason == "answered"
    assert agent.conversation.messages[-1].content == "a real answer"


async def test_invalid_tool_call_json_is_answered_and_the_model_recovers(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", '{"path": "a.txt"')]),  # cut short: not JSON
        ToolCalls([Call("read_file", {"path": "a.txt"})]),
        Text("it says alpha"),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        events = await drive(agent.run_turn("read a.txt"))
    assert finished(events).reason == "answered"
    tool_results = [m for m in agent.conversation.messages if m.role == "tool"]
    assert "JSON" in tool_results[0].content or "json" in tool_results[0].content
    assert "alpha" in tool_results[1].content
    assert agent.conversation.is_valid()
