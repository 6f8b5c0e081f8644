"""`build_session` wiring and `Session.apply_settings`, the hot-reload path, against the
loopback server: requests name the right model before and after a change."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import SecretStr

from forge.agent.history.session_file import SessionStore
from forge.config.settings import ContextSettings, LLMSettings, Settings, ToolsSettings
from forge.context.conversation import CANCELLED_RESULT, Conversation
from forge.context.manager import Manager
from forge.llm.messages import MessageKind, ToolCall, assistant, system, user
from forge.session.build import SessionOptions, build_session
from tests.agent.loop_harness import drive, finished
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

KEY = "sk-test-runtime-0123456789abcdef"


def settings_for(server: OpenAIServer, **llm: object) -> Settings:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": SecretStr(KEY),
        "max_retries": 0,
        **llm,
    }
    return Settings(llm=LLMSettings.model_validate(values))


async def test_a_new_runtime_records_a_session_and_answers(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Always run the tests with `make test`.")
    llm_server.enqueue(Text("hello"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        assert isinstance(session.context_manager, Manager)
        events = await drive(session.agent.run_turn("hi"))
    finally:
        await session.aclose()

    assert finished(events).reason == "answered"
    system_prompt = llm_server.requests[0].messages[0]["content"]
    assert "make test" in system_prompt and str(session.workspace) in system_prompt
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    session_file = session.store.path_for(session.session_id)
    assert KEY not in session_file.read_text()
    assert len(session.store.load(session.session_id)) == 3


async def test_resume_latest_continues_the_conversation(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    first = build_session(settings_for(llm_server), workspace)
    await drive(first.agent.run_turn("first question"))
    await first.aclose()

    second = build_session(settings_for(llm_server), workspace, SessionOptions(resume_latest=True))
    try:
        assert second.session_id == first.session_id
        await drive(second.agent.run_turn("second question"))
    finally:
        await second.aclose()
    contents = [m["content"] for m in llm_server.requests[-1].messages[1:]]
    assert contents == ["first question", "first answer", "second question"]
    # With no session for a workspace, resume_latest starts a new one.
    elsewhere = workspace / "sub"
    elsewhere.mkdir()
    fresh = build_session(settings_for(llm_server), elsewhere, SessionOptions(resume_latest=True))
    assert fresh.session_id != first.session_id and len(fresh.agent.conversation) == 1
    await fresh.aclose()


async def test_resuming_a_crashed_session_repairs_it(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    # A crash mid-command leaves the assistant's call logged without its result.
    store = SessionStore()
    log = store.create(workspace, "gpt-4o-mini")
    crashed = Conversation()
    log.attach(crashed)
    call = ToolCall("call_9", "execute_command", '{"command": "sleep 100"}')
    for message in (system("old prompt"), user("run it"), assistant(tool_calls=(call,))):
        crashed.append(message)
    assert not store.load(log.id).is_valid()

    llm_server.enqueue(Text("resumed"))
    session = build_session(settings_for(llm_server), workspace, SessionOptions(session_id=log.id))
    try:
        assert session.agent.conversation.is_valid()
        assert session.agent.conversation[-2].content == CANCELLED_RESULT
        # ... and the model is told the turn was cut off.
        assert session.agent.conversation[-1].meta.get("note") == "cut_off"
        assert session.agent.conversation[0].content != "old prompt"  # today's prompt
        events = await drive(session.agent.run_turn("go on"))
    finally:
        await session.aclose()
    assert finished(events).reason == "answered"
    replayed = store.load(log.id)
    assert replayed.is_valid() and replayed[-1].content == "resumed"


async def test_apply_settings_switches_model_and_summarization_model(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("summary")
        if request.messages[-1]["role"] == "user":
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text(f"answer from {request.model}")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server, model="main-a"), workspace)
    try:
        await drive(session.agent.run_turn("one"))
        old_provider = session.provider
        description = session.apply_settings(
            settings_for(llm_server, model="main-b", summarization_model="cheap-summarizer")
        )
        assert "main-b" in description and "cheap-summarizer" in description
        assert session.provider is not old_provider
        assert session.agent.provider is session.provider
        assert session.context_manager.provider_for_summarization().model == "cheap-summarizer"
        await drive(session.agent.run_turn("two"))
        await drive(session.agent.run_turn("three"))
        compaction = await drive(session.agent.compact())
        assert any(type(e).__name__ == "SummarizationCompleted" for e in compaction)
    finally:
        await session.aclose()

    agent_requests = [r for r in llm_server.requests if r.tools]
    assert [r.model for r in agent_requests] == ["main-a"] * 2 + ["main-b"] * 4
    summary_requests = [r for r in llm_server.requests if not r.tools]
    assert summary_requests and all(r.model == "cheap-summarizer" for r in summary_requests)
    # the session list shows the model the session went on with, not the one it began with
    assert [info.model for info in session.store.list_sessions(workspace)] == ["main-b"]


async def test_apply_settings_updates_policy_and_keeps_always_approvals(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    session = build_session(settings_for(llm_server), workspace)
    try:
        session.policy.approve_always("write_file")
        same_llm = session.settings.llm
        new = Settings(
            llm=same_llm,
            tools=ToolsSettings(command_allowlist=["git status"], command_timeout=7),
            context=ContextSettings(max_tokens=5000),
        )
        description = session.apply_settings(new)
        assert "provider" not in description
        assert "tool approvals" in description and "context settings" in description
        assert session.agent.policy is session.policy
        assert session.policy.command_is_allowlisted("git status --short")
        assert "write_file" in session.policy.approved_this_session
        assert session.agent.command_timeout == 7
        assert session.context_manager.max_tokens == 5000
        assert session.agent.context_manager is session.context_manager
        assert session.apply_settings(new) == "no changes"
    finally:
        await session.aclose()


async def test_compaction_is_recorded_and_a_resume_sees_the_summary(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("SUMMARY: a.txt was read.")
        if request.messages[-1]["role"] == "user":
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text(f"answer {len(request.messages)}")

    llm_server.responder = respond
    session = build_session(settings_for(llm_server), workspace)
    try:
        for text in ("one", "two", "three"):
            await drive(session.agent.run_turn(text))
        compaction = await drive(session.agent.compact())
        assert any(type(e).__name__ == "SummarizationCompleted" for e in compaction)
        in_memory = [message.to_record() for message in session.agent.conversation]
    finally:
        await session.aclose()

    path = session.store.path_for(session.session_id)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    inserted_kinds = {
        item["kind"]
        for record in records
        if record["type"] == "replace"
        for item in record["inserted"]
    }
    assert inserted_kinds - {"normal"}, "the compaction was not written to the session file"
    resumed = session.store.load(session.session_id)
    assert [message.to_record() for message in resumed] == in_memory
    assert any(message.kind is not MessageKind.NORMAL for message in resumed)
