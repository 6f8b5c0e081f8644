"""`@agent-<name> message`: the turn asks the model to hand the message to that agent;
plain `@path` mentions are unchanged (docs/adr/0045)."""

from __future__ import annotations

from pathlib import Path

from forge.agent.history.checkpoints import current_turn
from forge.agent.subagents.mentions import requested_agent, with_agent_request
from forge.session.build import build_session
from forge.tui.file_completion import agent_completions, mention_at
from tests.agent.subagents.support import (
    CHILD_MODEL,
    PARENT_MODEL,
    drive,
    settings_for,
    write_agent,
)
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def test_only_a_known_agent_mentioned_as_a_word_is_requested() -> None:
    names = {"explore", "reviewer"}
    assert requested_agent("@agent-reviewer look at the diff", names) == "reviewer"
    assert requested_agent("please (@agent-explore) map it", names) == "explore"
    assert requested_agent("@agent-nobody do it", names) is None
    assert requested_agent("mail me@agent-explore.com", names) is None
    assert requested_agent("@agent-explore.md is a file", names) is None
    assert 'call `task` with agent "explore"' in with_agent_request("x", "explore")


def test_completion_offers_the_agents_after_at_agent() -> None:
    names = ["reviewer", "explore"]
    assert agent_completions("agent-", names) == ["agent-explore", "agent-reviewer"]
    assert agent_completions("agent-re", names) == ["agent-reviewer"]
    assert agent_completions("ag", names) == ["agent-explore", "agent-reviewer"]
    assert agent_completions("src/app", names) == []
    assert agent_completions("", names) == []
    assert mention_at("ask @agent-ex", 13) == (4, "agent-ex")


async def test_an_agent_mention_asks_for_the_agent_and_a_path_mention_still_attaches(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    (workspace / "notes.txt").write_text("the notes\n")
    llm_server.enqueue_for(PARENT_MODEL, Text("ok"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        await drive(session.run_turn("@agent-finder what does @notes.txt say?"))
    finally:
        await session.aclose()
    sent = llm_server.requests_for(PARENT_MODEL)[0].messages[-1]["content"]
    assert sent.startswith("@agent-finder what does @notes.txt say?")
    assert "the notes" in sent  # the file is attached as before
    assert 'call `task` with agent "finder"' in sent
    assert session.agent_names() == ["explore", "finder"]


async def test_an_agent_mention_forces_the_first_reply_to_call_task_and_only_that_one(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls([Call("task", {"agent": "finder", "prompt": "find the notes"})]),
        Text("The finder found them."),
        Text("plain"),
    )
    llm_server.enqueue_for(CHILD_MODEL, Text("notes are in docs/"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        await drive(session.run_turn("@agent-finder where are the notes?"))
        await drive(session.run_turn("and now without a mention"))
    finally:
        await session.aclose()
    parent = llm_server.requests_for(PARENT_MODEL)
    # The first reply of the mentioned turn must call `task`; nothing else is forced.
    forced = {"type": "function", "function": {"name": "task"}}
    assert parent[0].body["tool_choice"] == forced
    assert parent[1].body.get("tool_choice") != forced
    assert parent[2].body.get("tool_choice") != forced
    assert all(r.body.get("tool_choice") != forced for r in llm_server.requests_for(CHILD_MODEL))


async def test_rewind_and_undo_name_an_agent_turn_as_typed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """/rewind's list and /undo's notice name a turn by what the user typed: not the
    instruction `@agent-` added for the model."""
    write_agent(workspace, "finder")
    llm_server.enqueue_for(PARENT_MODEL, Text("ok"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        await drive(session.run_turn("@agent-finder find X"))
        assert [turn.text for turn in session.history.turns()] == ["@agent-finder find X"]
        info = current_turn(session.agent.conversation)
        assert info is not None and info.text == "@agent-finder find X"
    finally:
        await session.aclose()
