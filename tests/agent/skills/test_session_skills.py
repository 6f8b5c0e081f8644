"""Skills in a real session against the loopback server: the listing's bytes in the system
prompt the server receives stay the same across turns (a skill added on disk meanwhile) and
`--continue`; the cap's notice; the model loading a skill; `/name args`; the clash order;
a loaded skill re-attached after /compact summarized it away."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from pydantic import SecretStr

from forge.agent.events import ApprovalRequested, QuestionAsked
from forge.agent.history.session_file import SessionStore
from forge.config.settings import ContextSettings, LLMSettings, Settings
from forge.session.build import SessionOptions, build_session
from forge.session.events import SessionEvent
from tests.agent.loop_harness import approve_once
from tests.agent.skills.helpers import write_skill
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls

KEY = "sk-test-skills-0123456789abcdef"


def settings_for(server: OpenAIServer, **sections: object) -> Settings:
    llm = LLMSettings(
        base_url=server.base_url, api_key=SecretStr(KEY), max_retries=0, model="gpt-4o"
    )
    return Settings(llm=llm, **sections)  # type: ignore[arg-type]


async def drive(events: AsyncIterator[SessionEvent]) -> list[SessionEvent]:
    seen = []
    async for event in events:
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            event.future.set_result(approve_once(event))
        elif isinstance(event, QuestionAsked):
            event.future.set_result("yes")
    return seen


def system_prompt(server: OpenAIServer, index: int) -> str:
    first = server.requests[index].messages[0]
    assert first["role"] == "system"
    return str(first["content"])


async def test_the_listing_bytes_stay_across_turns_and_continue(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review a diff.")
    store = SessionStore()
    session = build_session(settings_for(llm_server), workspace, SessionOptions(store=store))
    llm_server.enqueue(Text("one"), Text("two"), Text("three"))
    await drive(session.run_turn("first"))
    write_skill(workspace / ".agents" / "skills", "late", "Added while running.")
    await drive(session.run_turn("second"))
    await session.aclose()
    resumed = build_session(
        settings_for(llm_server), workspace, SessionOptions(store=store, resume_latest=True)
    )
    assert resumed.session_id == session.session_id
    await drive(resumed.run_turn("third"))
    await resumed.aclose()
    prompts = [system_prompt(llm_server, index) for index in range(3)]
    assert "- review: Review a diff. (.forge/skills/review/SKILL.md)" in prompts[0]
    assert prompts[0].encode() == prompts[1].encode() == prompts[2].encode()
    assert "late" not in prompts[2]  # a new skill shows in the next session's listing


async def test_a_new_session_lists_the_skill_added_since(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_skill(workspace / ".agents" / "skills", "late", "Added later.")
    session = build_session(settings_for(llm_server), workspace)
    llm_server.enqueue(Text("ok"))
    await drive(session.run_turn("hi"))
    await session.aclose()
    assert "- late: Added later." in system_prompt(llm_server, 0)


async def test_the_listing_is_capped_with_a_notice(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    for index in range(150):
        write_skill(workspace / ".forge" / "skills", f"skill-{index:03d}", "word " * 200)
    session = build_session(settings_for(llm_server), workspace)
    llm_server.enqueue(Text("ok"))
    await drive(session.run_turn("hi"))
    await session.aclose()
    notice = next(text for text in session.skill_notices if "capped" in text)
    assert "skill-149" in notice and "left out" in notice
    prompt = system_prompt(llm_server, 0)
    start = prompt.index("Skills (")
    listing = prompt[start:].split("\n\n")[0]
    assert session.counter.count_text(listing) <= 0.02 * 128_000  # gpt-4o's window
    assert "skill-000" in listing and "skill-149" not in listing


async def test_the_model_loads_a_skill_and_reads_its_body(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    user = Path(os.environ["XDG_CONFIG_HOME"]) / "forge" / "skills"
    path = write_skill(user, "deploy", "Deploy it.", "Run ${SKILL_DIR}/go.sh\n")
    session = build_session(settings_for(llm_server), workspace)
    llm_server.enqueue(ToolCalls([Call("skill", {"name": "deploy"})]), Text("done"))
    await drive(session.run_turn("deploy please"))
    await session.aclose()
    tool_message = llm_server.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert f"Run {path.parent}/go.sh" in tool_message["content"]
    assert session.skills is not None and [s.name for s in session.skills.loaded()] == ["deploy"]


async def test_name_args_runs_a_skill_and_commands_win_clashes(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review.", "Review $1 now\n")
    write_skill(workspace / ".forge" / "skills", "model", "Clashes with /model.")
    write_skill(workspace / ".forge" / "skills", "quiet", extra="user-invocable: false\n")
    session = build_session(settings_for(llm_server), workspace)
    try:
        text = session.skill_command("/review src/a.py", taken=["model", "help"])
        assert text is not None and "Review src/a.py now" in text
        assert session.skill_command("/model x", taken=["model"]) is None
        assert session.skill_command("/quiet") is None
        assert session.skill_command("/etc/hosts is broken") is None
    finally:
        await session.aclose()


async def test_slash_name_args_sends_the_skill_once_with_its_arguments(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """The skill a user runs counts as loaded before its message is in the conversation:
    that message must not be mistaken for one a summary took out (a second copy, without
    the arguments, "re-attached after the conversation was summarized")."""
    write_skill(workspace / ".forge" / "skills", "greet", "Greets.", "Greet $1 warmly\n")
    session = build_session(settings_for(llm_server), workspace)
    text = session.skill_command("/greet Bob")
    assert text is not None
    llm_server.enqueue(Text("Hello Bob"))
    await drive(session.run_turn(text))
    await session.aclose()
    sent = llm_server.requests[-1].messages[-1]["content"]
    assert sent == text
    assert "re-attached" not in sent
    assert sent.count('<skill name="greet"') == 1


async def test_a_run_skill_is_re_attached_after_its_message_was_condensed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    rules = "REVIEW RULES " + "keep every check " * 300
    write_skill(workspace / ".forge" / "skills", "review", "Review.", rules + "\n")
    # Each message fits its share (1,200 tokens; a larger one would be sent as head and tail,
    # issue 34), the two together do not: the oldest, the skill's, is condensed.
    context = ContextSettings(max_tokens=8_000, user_instruction_share=0.15)
    session = build_session(settings_for(llm_server, context=context), workspace)
    text = session.skill_command("/review")
    assert text is not None
    llm_server.responder = lambda request: Text("Condensed: review the code.")
    await drive(session.run_turn(text))
    await drive(session.run_turn("background fact " * 400))
    await drive(session.run_turn("now the next question"))
    assert not any("REVIEW RULES" in (m.content or "") for m in session.messages)
    await drive(session.run_turn("go on"))
    await session.aclose()
    sent = llm_server.requests[-1].text()
    assert "re-attached after the conversation was summarized" in sent
    assert "REVIEW RULES" in sent


async def test_a_resumed_session_knows_which_skills_were_loaded(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review.", "Review rules\n")
    write_skill(workspace / ".forge" / "skills", "other", "Other.", "Other rules\n")
    store = SessionStore()
    session = build_session(settings_for(llm_server), workspace, SessionOptions(store=store))
    llm_server.enqueue(ToolCalls([Call("skill", {"name": "review"})]), Text("done"))
    await drive(session.run_turn("review please"))
    await session.aclose()
    resumed = build_session(
        settings_for(llm_server), workspace, SessionOptions(store=store, resume_latest=True)
    )
    await resumed.aclose()
    assert resumed.skills is not None
    assert [skill.name for skill in resumed.skills.loaded()] == ["review"]


async def test_rewinding_before_a_skill_was_loaded_unloads_it(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_skill(workspace / ".forge" / "skills", "review", "Review.", "Review rules\n")
    session = build_session(settings_for(llm_server), workspace)
    llm_server.enqueue(Text("hello"), ToolCalls([Call("skill", {"name": "review"})]), Text("ok"))
    await drive(session.run_turn("first"))
    await drive(session.run_turn("load the review skill"))
    assert session.skills is not None and [s.name for s in session.skills.loaded()] == ["review"]
    turns = session.history.turns()
    session.history.rewind_conversation(turns[1].id)
    await session.aclose()
    assert session.skills.loaded() == []
