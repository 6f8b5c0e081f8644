"""Loop-breaking tools (`ask_question`, `converse`, `task_completion`): their calls and results
stay in the conversation, so later requests (and a resumed session) can refer to them."""

from __future__ import annotations

import json
from pathlib import Path

from forge.agent.events import ToolCallFinished
from tests.agent.loop_harness import drive, finished, make_agent, make_provider, of_type
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


async def test_every_loop_breaking_call_and_result_is_sent_in_later_requests(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("ask_question", {"question": "Tabs or spaces?", "suggestions": ["tabs"]})]),
        ToolCalls([Call("converse", {"message": "Spaces it is."})]),
        ToolCalls([Call("task_completion", {"result": "Reformatted with spaces."})]),
        Text("You chose spaces, and I reformatted."),
    )
    async with make_provider(llm_server) as provider:
        agent = make_agent(provider, workspace)
        asked = await drive(agent.run_turn("format the code"), answer=lambda q: "spaces")
        completed = await drive(agent.run_turn("go ahead"))
        recalled = await drive(agent.run_turn("what did we decide?"))

    assert of_type(asked, ToolCallFinished)[0].result == "spaces"
    assert finished(asked).reason == "answered"
    assert finished(completed).reason == "completed"
    assert finished(recalled).reason == "answered"
    assert agent.conversation.is_valid()

    sent = llm_server.requests[-1].messages
    calls = [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
        for message in sent
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or []
    ]
    assert calls == [
        ("ask_question", {"question": "Tabs or spaces?", "suggestions": ["tabs"]}),
        ("converse", {"message": "Spaces it is."}),
        ("task_completion", {"result": "Reformatted with spaces."}),
    ]
    results = [m for m in sent if m["role"] == "tool"]
    assert results[0]["content"] == "spaces"  # the user's answer, as the question's result
    assert "Spaces it is." in results[1]["content"]
    assert "Reformatted with spaces." in results[2]["content"]
    # Each result follows its call (ids pair up in order).
    call_ids = [
        call["id"]
        for message in sent
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or []
    ]
    assert [m["tool_call_id"] for m in results] == call_ids
