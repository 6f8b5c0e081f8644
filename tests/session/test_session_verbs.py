"""The session API's verbs against the loopback server: a turn's own model, the settings
switch, the model list, the context report, undo and mentions — real HTTP, real files."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.events import AgentEvent, ApprovalRequested, MessageDelta, QuestionAsked
from forge.agent.modes import PermissionMode
from forge.config.settings import (
    ContextSettings,
    LLMSettings,
    SandboxSettings,
    Settings,
    ToolsSettings,
)
from forge.llm.model_list import ModelListError
from forge.session.build import SessionOptions, build_session
from forge.session.core import Session
from forge.session.events import AttachmentsAdded, SessionEvent
from tests.agent.loop_harness import approve_once, finished
from tests.support.anthropic_server import AnthropicServer
from tests.support.openai_server import (
    Call,
    Info,
    OpenAIServer,
    RecordedRequest,
    Text,
    ToolCalls,
)

KEY = "sk-test-session-0123456789abcdef"


def settings_for(server: OpenAIServer, **llm: object) -> Settings:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": SecretStr(KEY),
        "max_retries": 0,
        "model": "configured-model",
        **llm,
    }
    return Settings(llm=LLMSettings.model_validate(values))


@pytest.fixture
async def session(llm_server: OpenAIServer, workspace: Path) -> AsyncIterator[Session]:
    running = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        yield running
    finally:
        await running.aclose()


async def drive(events: AsyncIterator[SessionEvent]) -> list[SessionEvent]:
    """Consume a session turn to its end, approving and answering what it asks."""
    seen: list[SessionEvent] = []
    async for event in events:
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            event.future.set_result(approve_once(event))
        elif isinstance(event, QuestionAsked):
            event.future.set_result("yes")
    return seen


def agent_events(events: list[SessionEvent]) -> list[AgentEvent]:
    return [event for event in events if not isinstance(event, AttachmentsAdded)]


# --- a turn's own model --------------------------------------------------------------------------
async def test_a_turn_on_its_own_model_leaves_the_sessions_provider_alone(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Text("from the command's model"), Text("from the configured model"))
    provider = session.provider
    during: list[object] = []
    async for event in session.run_turn("review this", model="review-model"):
        during.append(session.agent.provider)
        assert not isinstance(event, ApprovalRequested | QuestionAsked)
    assert during and all(seen is provider for seen in during)  # never swapped
    events = await drive(session.run_turn("and now"))
    assert finished(agent_events(events)).reason == "answered"
    assert [request.model for request in llm_server.requests] == [
        "review-model",
        "configured-model",
    ]
    assert session.provider is provider and session.agent.provider is provider


async def test_after_esc_in_a_turn_on_its_own_model_the_next_turn_uses_the_configured_one(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(
        Text("a long answer that is cut off " * 20, chunk_size=4, chunk_delay=0.02),
        Text("back on the configured model"),
    )
    streaming = asyncio.Event()

    async def consume() -> None:
        async for event in session.run_turn("slow one", model="review-model"):
            if isinstance(event, MessageDelta):
                streaming.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(streaming.wait(), 10)
    assert session.turn_running
    task.cancel()  # what Esc does to the turn worker
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not session.turn_running
    events = await drive(session.run_turn("next"))
    assert finished(agent_events(events)).reason == "answered"
    assert [request.model for request in llm_server.requests] == [
        "review-model",
        "configured-model",
    ]
    # The cut-off answer was kept as the cancelled turn's reply (AGENTS.md invariant 1).
    assert llm_server.requests[1].messages[-1]["content"] == "next"


async def test_the_configured_model_given_as_the_turns_model_is_the_sessions_provider(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Text("same"))
    await drive(session.run_turn("hi", model="configured-model"))
    assert [request.model for request in llm_server.requests] == ["configured-model"]


# --- the settings switch -------------------------------------------------------------------------
async def test_apply_settings_reaches_the_next_request_and_the_next_summary(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("summary")
        if request.messages[-1]["role"] == "user":
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text(f"answer from {request.model}")

    llm_server.responder = respond
    await drive(session.run_turn("one"))
    session.apply_settings(
        settings_for(llm_server, model="main-b", summarization_model="cheap-summarizer")
    )
    assert session.agent.provider is session.provider  # one owner: the shared parts
    assert session.agent.context_manager is session.context_manager
    await drive(session.run_turn("two"))
    await drive(session.compact())
    chat = [request for request in llm_server.requests if request.tools]
    summaries = [request for request in llm_server.requests if not request.tools]
    assert {request.model for request in chat[:2]} == {"configured-model"}
    assert chat[-1].model == "main-b"
    assert summaries and {request.model for request in summaries} == {"cheap-summarizer"}


async def test_a_new_context_manager_is_the_agents_too_and_costs_its_summaries(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("summary")
        if request.messages[-1]["role"] == "user":
            return ToolCalls([Call("read_file", {"path": "a.txt"})])
        return Text("answer")

    old = session.context_manager
    changed = session.settings.model_copy(update={"context": ContextSettings(max_tokens=20_000)})
    assert "context settings" in session.apply_settings(changed)
    assert session.context_manager is not old
    assert session.agent.context_manager is session.context_manager
    assert session.context_manager.max_tokens == 20_000 != old.max_tokens
    llm_server.responder = respond
    await drive(session.run_turn("one"))
    await drive(session.run_turn("two"))
    await drive(session.compact())
    kinds = {line.kind for line in session.reports.cost().lines}
    assert "summarization" in kinds  # the new manager reports to the same ledger


async def test_apply_settings_replaces_the_policy_once_and_set_mode_changes_it(
    session: Session, llm_server: OpenAIServer
) -> None:
    session.set_mode(PermissionMode.READ_ONLY)
    assert session.agent.policy.mode is PermissionMode.READ_ONLY
    changed = session.settings.model_copy(
        update={"tools": ToolsSettings(command_timeout=7, auto_approve=["read_file"])}
    )
    assert "tool approvals" in session.apply_settings(changed)
    assert session.agent.policy is session.policy
    assert session.policy.mode is PermissionMode.READ_ONLY  # the mode the user chose stays
    assert session.agent.command_timeout == 7


# --- the model list ------------------------------------------------------------------------------
async def test_list_models_asks_the_server_with_the_sessions_key(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.info["/v1/models"] = Info({"data": [{"id": "zeta"}, {"id": "alpha"}]})
    assert await session.list_models() == ["alpha", "zeta"]
    asked = [request for request in llm_server.info_requests if request.path == "/v1/models"]
    assert asked[-1].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Info({"error": "no"}, status=401), "answered HTTP 401"),
        (Info({"data": "not a list of models"}), "did not answer with a model list"),
        (Info("not json"), "did not answer with a model list"),
    ],
)
async def test_list_models_says_why_it_cannot_list(
    session: Session, llm_server: OpenAIServer, answer: Info, said: str
) -> None:
    llm_server.info["/v1/models"] = answer
    with pytest.raises(ModelListError, match=said) as raised:
        await session.list_models()
    assert KEY not in str(raised.value)


async def test_list_models_names_a_server_that_cannot_be_reached(workspace: Path) -> None:
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", api_key=SecretStr(KEY), max_retries=0)
    unreachable = build_session(Settings(llm=llm), workspace)
    try:
        with pytest.raises(
            ModelListError, match=re.escape("could not reach http://127.0.0.1:9/v1/models")
        ):
            await unreachable.list_models()
    finally:
        await unreachable.aclose()


# --- reports -------------------------------------------------------------------------------------
async def test_context_report_after_a_turn(session: Session, llm_server: OpenAIServer) -> None:
    before = session.reports.context()
    llm_server.enqueue(Text("the answer", prompt_tokens=321, completion_tokens=9))
    await drive(session.run_turn("a question"))
    report = session.reports.context()
    assert [message.content for message in report.messages][-2:] == ["a question", "the answer"]
    assert report.current_tokens > before.current_tokens > 0
    assert report.max_tokens == session.context_manager.max_tokens > 0
    assert report.tool_tokens > 0
    assert (report.prompt_tokens, report.completion_tokens) == (321, 9)
    assert report.window  # e.g. "128,000 tokens (guessed from the model name)"


async def test_cost_report_counts_the_turns_model(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Text("priced", prompt_tokens=100, completion_tokens=5))
    await drive(session.run_turn("hi", model="review-model"))
    lines = {line.model: line for line in session.reports.cost().lines}
    assert set(lines) == {"review-model"}  # the request was the turn's model's
    assert lines["review-model"].prompt == 100


# --- files ---------------------------------------------------------------------------------------
async def test_undo_after_a_write_restores_the_file(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "keep.txt").write_text("before\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "keep.txt"})]),
        ToolCalls([Call("write_file", {"path": "keep.txt", "content": "after\n"})]),
        Text("done"),
    )
    await drive(session.run_turn("change keep.txt"))
    assert (workspace / "keep.txt").read_text() == "after\n"
    outcome = session.history.undo()
    assert outcome is not None and not outcome.failed
    assert (workspace / "keep.txt").read_text() == "before\n"
    assert session.history.undo() is None  # nothing left to undo


async def test_mentions_are_attached_and_said_before_the_turn(
    session: Session, llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    llm_server.enqueue(Text("seen"))
    events = await drive(session.run_turn("explain @app.py and @missing.py"))
    first = events[0]
    assert isinstance(first, AttachmentsAdded)
    assert len(first.attached) == 1 and "app.py" in first.attached[0]
    assert len(first.problems) == 1 and "missing.py" in first.problems[0]
    assert not any(isinstance(event, AttachmentsAdded) for event in events[1:])
    sent = llm_server.requests[0].messages[-1]["content"]
    assert '<attached_file path="app.py"' in sent and "print('hi')" in sent


async def test_rewind_conversation_goes_back_before_a_turn(
    session: Session, llm_server: OpenAIServer
) -> None:
    llm_server.enqueue(Text("one"), Text("two"))
    await drive(session.run_turn("first"))
    await drive(session.run_turn("second"))
    turns = session.history.turns()
    assert [turn.text for turn in turns] == ["first", "second"]
    session.history.rewind_conversation(turns[1].id)
    assert [message.content for message in session.messages][-2:] == ["first", "one"]


async def test_list_models_on_the_anthropic_api_goes_through_the_sdks_client(
    anthropic_server: AnthropicServer, workspace: Path
) -> None:
    llm = LLMSettings.model_validate(
        {
            "provider": "anthropic",
            "model": "claude-haiku-4-5",
            "base_url": anthropic_server.base_url,
            "api_key": SecretStr(KEY),
            "max_retries": 0,
        }
    )
    claude = build_session(Settings(llm=llm), workspace)
    try:
        assert await claude.list_models() == ["claude-haiku-4-5", "claude-sonnet-4-5"]
    finally:
        await claude.aclose()
    headers = anthropic_server.models_requests[-1]
    # The SDK's own request: its API version header and the key the way it sends it.
    assert "anthropic-version" in headers
    assert KEY in (
        headers.get("x-api-key", ""),
        headers.get("authorization", "").removeprefix("Bearer "),
    )


async def test_apply_settings_replaces_the_sandbox_and_closing_the_session_ends_it(
    session: Session,
) -> None:
    first = session.sandbox
    assert first is not None
    changed = session.settings.model_copy(
        update={"tools": ToolsSettings(sandbox=SandboxSettings(mode="off"), hide_env=["X_*"])}
    )
    session.apply_settings(changed)
    second = session.sandbox
    assert second is not None and second is not first
    assert second.state().mode == "off" and second.hide_env == ("X_*",)
    await session.aclose()
    assert session.sandbox is None
