"""The `task` tool end to end: a real session on the loopback server, scripted per model,
children running real tools in a temp workspace (docs/adr/0045)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.events import (
    ApprovalRequested,
    MessageDelta,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from forge.agent.history.session_file import SessionStore
from forge.agent.history.session_listing import print_sessions
from forge.agent.subagents.definitions import load_agent_definitions
from forge.session.build import SessionOptions, build_session
from tests.agent.subagents.support import (
    CHILD_MODEL,
    PARENT_MODEL,
    child_events,
    drive,
    settings_for,
    write_agent,
)
from tests.support.openai_server import (
    Call,
    Fault,
    OpenAIServer,
    RecordedRequest,
    Reply,
    Text,
    ToolCalls,
)


def task_call(agent: str, prompt: str, call_id: str) -> Call:
    return Call("task", {"agent": agent, "prompt": prompt}, id=call_id)


def figures(result: str) -> dict[str, object]:
    """The `[subagent] {...}` line of a task result."""
    line = next(line for line in result.splitlines() if line.startswith("[subagent] "))
    return dict(json.loads(line.removeprefix("[subagent] ")))


def finished_tasks(events: list[object]) -> list[ToolCallFinished]:
    return [e for e in events if isinstance(e, ToolCallFinished) and e.call.name == "task"]


async def test_two_task_calls_run_at_once_on_the_childs_model_and_only_reports_come_back(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", body="SECRET-CHILD-INSTRUCTIONS: find things.")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls(
            [task_call("finder", "look for A", "t1"), task_call("finder", "look for B", "t2")]
        ),
        Text("both reported"),
    )
    llm_server.enqueue_for(
        CHILD_MODEL, Text("report one", delay=0.4), Text("report two", delay=0.4)
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn("find A and B"))
    finally:
        await session.aclose()

    children = llm_server.requests_for(CHILD_MODEL)
    assert len(children) == 2
    first, second = sorted(children, key=lambda request: request.started_at)
    assert first.finished_at is not None and second.finished_at is not None
    # Overlap by order: the second child's request started before the first one's ended.
    assert second.started_at < first.finished_at
    assert isinstance(events[-1], TurnFinished) and events[-1].final_text == "both reported"

    results = finished_tasks(events)
    assert [result.call.id for result in results] == ["t1", "t2"]  # in the calls' order
    assert {result.result.split("\n")[0] for result in results} == {"report one", "report two"}
    assert all(figures(result.result)["completed"] is True for result in results)

    parent_requests = llm_server.requests_for(PARENT_MODEL)
    assert len(parent_requests) == 2
    sent = parent_requests[1].messages
    assert [message["role"] for message in sent] == ["system", "user", "assistant", "tool", "tool"]
    assert "SECRET-CHILD-INSTRUCTIONS" not in parent_requests[1].text()
    assert {m["content"].split("\n")[0] for m in sent[3:]} == {"report one", "report two"}
    # The children's requests carried the definition's prompt and their own task only.
    assert all("SECRET-CHILD-INSTRUCTIONS" in request.text() for request in children)
    assert all("find A and B" not in request.text() for request in children)


async def test_a_child_at_max_turns_returns_its_partial_text_not_completed(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", extra="max_turns: 2\n")
    (workspace / "a.txt").write_text("a\n")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("finder", "look around", "t1")]), Text("ok")
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        ToolCalls([Call("list_files", {})], text="The root holds a.txt."),
        ToolCalls([Call("read_file", {"path": "a.txt"})], text="a.txt says a."),
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn("look"))
    finally:
        await session.aclose()
    (result,) = finished_tasks(events)
    assert "The root holds a.txt." in result.result and "a.txt says a." in result.result
    numbers = figures(result.result)
    assert numbers["completed"] is False and numbers["reason"] == "max_turns"
    assert numbers["turns"] == 2
    assert len(llm_server.requests_for(CHILD_MODEL)) == 2


async def test_an_unknown_agent_is_a_tool_error_listing_the_agents(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("nobody", "do it", "t1")]), Text("ok")
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    (result,) = finished_tasks(events)
    assert result.is_error
    assert "unknown agent 'nobody'" in result.result
    assert "explore" in result.result and "finder" in result.result
    assert not llm_server.requests_for(CHILD_MODEL)


async def test_a_child_whose_model_fails_reports_the_error_and_the_parent_goes_on(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder", model="missing-model")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("finder", "look", "t1")]), Text("carried on")
    )
    llm_server.enqueue_for(
        "missing-model", Fault(404, {"error": {"message": "model missing-model not found"}})
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    (result,) = finished_tasks(events)
    assert result.is_error and "not found" in result.result
    assert figures(result.result)["completed"] is False
    assert isinstance(events[-1], TurnFinished) and events[-1].final_text == "carried on"


async def test_a_child_of_a_read_only_parent_cannot_write(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "writer")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("writer", "write x.txt", "t1")]), Text("ok")
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]),
        Text("could not write"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(mode="read-only"))
    try:
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    assert not (workspace / "x.txt").exists()
    refused = [
        e.event
        for e in child_events(events)
        if isinstance(e.event, ToolCallFinished) and e.event.call.name == "write_file"
    ]
    assert refused and refused[0].is_error and "read-only mode" in refused[0].result
    assert not any(isinstance(event, ApprovalRequested) for event in events)


async def test_a_childs_approval_request_is_labelled_and_always_holds_for_that_agent_only(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "writer")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls([task_call("writer", "write x.txt", "t1")]),
        ToolCalls([Call("write_file", {"path": "y.txt", "content": "y"})]),
        Text("ok"),
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]),
        Text("wrote it"),
    )
    session = build_session(settings_for(llm_server), workspace)
    requests: list[ApprovalRequested] = []
    from forge.agent.events import ApprovalDecision, ApprovalVerdict

    try:
        async for event in session.run_turn("go"):
            if isinstance(event, ApprovalRequested):
                requests.append(event)
                event.future.set_result(ApprovalDecision(ApprovalVerdict.APPROVE_ALWAYS))
    finally:
        await session.aclose()
    assert (workspace / "x.txt").read_text() == "x"
    assert [request.agent for request in requests] == ["writer", ""]  # the parent still asks
    assert session.policy.approved_this_session == {"write_file"}


async def test_esc_cancels_the_children_and_records_their_partial_reports(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("finder", "look", "t1")]), Text("unused")
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        Text("found the first half " + "and more " * 200, chunk_size=8, chunk_delay=0.05),
    )
    session = build_session(settings_for(llm_server), workspace)
    streamed = asyncio.Event()
    deltas: list[str] = []

    async def consume() -> None:
        async for event in session.run_turn("go"):
            if isinstance(event, SubagentEvent) and isinstance(event.event, MessageDelta):
                deltas.append(event.event.text)
                if len("".join(deltas)) > 30:
                    streamed.set()

    worker = asyncio.ensure_future(consume())
    try:
        await asyncio.wait_for(streamed.wait(), 10)
        worker.cancel()
        with pytest.raises(asyncio.CancelledError):
            await worker
    finally:
        await session.aclose()
    results = [m for m in session.messages if m.role == "tool" and m.tool_call_id == "t1"]
    assert len(results) == 1
    assert results[0].content.startswith("found the first half")
    assert "[interrupted by the user" in results[0].content
    assert figures(results[0].content)["completed"] is False
    assert len(llm_server.requests_for(PARENT_MODEL)) == 1  # the turn ended there


async def test_child_sessions_are_saved_and_listed_under_their_parent(
    llm_server: OpenAIServer, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(PARENT_MODEL, ToolCalls([task_call("finder", "look", "t1")]), Text("ok"))
    llm_server.enqueue_for(CHILD_MODEL, Text("the report"))
    store = SessionStore()
    session = build_session(settings_for(llm_server), workspace, SessionOptions(store=store))
    try:
        await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    infos = store.list_sessions(workspace)
    child = next(info for info in infos if info.parent)
    assert child.parent == session.session_id and child.agent == "finder"
    assert child.model == CHILD_MODEL and child.title == "look"
    assert store.latest_id_for(workspace) == session.session_id  # --continue: the parent
    child_messages = store.load(child.id).messages
    assert [m.role for m in child_messages] == ["system", "user", "assistant"]
    print_sessions(workspace, store=store)
    lines = capsys.readouterr().out.splitlines()
    parent_line = next(i for i, line in enumerate(lines) if line.startswith(session.session_id))
    assert (
        lines[parent_line + 1].startswith(f"  └ {child.id}")
        and "[finder]" in lines[parent_line + 1]
    )


async def test_each_childs_cost_is_in_the_cost_report(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls([task_call("finder", "look", "t1"), task_call("explore", "map it", "t2")]),
        Text("ok", prompt_tokens=100, completion_tokens=10),
    )
    llm_server.enqueue_for(
        CHILD_MODEL, Text("finder report", prompt_tokens=1000, completion_tokens=50)
    )
    llm_server.enqueue_for(PARENT_MODEL)  # explore inherits the parent's model
    prices = {
        PARENT_MODEL: {"input": 1.0, "output": 2.0},
        CHILD_MODEL: {"input": 0.5, "output": 1.0},
    }
    session = build_session(settings_for(llm_server, prices=prices), workspace)
    try:
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    report = session.reports.cost()
    assert report.subagent_names() == ["finder", "explore"] or set(report.subagent_names()) == {
        "finder",
        "explore",
    }
    assert report.subagent_dollars("finder") == pytest.approx((1000 * 0.5 + 50 * 1.0) / 1e6)
    assert "subagent finder" in report.details_markdown()
    total = report.dollars()
    assert total is not None and total > report.dollars("agent")  # type: ignore[operator]
    (finder_result, _) = finished_tasks(events)
    assert figures(finder_result.result)["cost_usd"] == pytest.approx(550 / 1e6)
    assert figures(finder_result.result)["tokens"] == 1050
    assert any(isinstance(e, ToolCallStarted) for e in events)


async def test_continue_shows_the_childrens_results_and_rewind_before_the_task_turn_drops_them(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "finder")
    llm_server.enqueue_for(
        PARENT_MODEL,
        Text("first answer"),
        ToolCalls([task_call("finder", "look", "t1")]),
        Text("after the task"),
    )
    llm_server.enqueue_for(CHILD_MODEL, Text("the child's report"))
    store = SessionStore()
    session = build_session(settings_for(llm_server), workspace, SessionOptions(store=store))
    try:
        await drive(session.run_turn("hello"))
        await drive(session.run_turn("use the finder"))
    finally:
        await session.aclose()

    resumed = build_session(
        settings_for(llm_server), workspace, SessionOptions(store=store, resume_latest=True)
    )
    try:
        assert resumed.session_id == session.session_id  # not the child's session
        reports = [m for m in resumed.messages if m.role == "tool" and m.name == "task"]
        assert len(reports) == 1 and reports[0].content.startswith("the child's report")
        task_turn = next(turn for turn in resumed.history.turns() if turn.text == "use the finder")
        resumed.history.rewind_conversation(task_turn.id)
        assert not any(m.role == "tool" for m in resumed.messages)
        assert [m.content for m in resumed.messages if m.role == "user"] == ["hello"]
    finally:
        await resumed.aclose()


async def test_undo_restores_the_files_a_child_wrote(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "writer")
    (workspace / "old.txt").write_text("before\n")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("writer", "write files", "t1")]), Text("ok")
    )
    llm_server.enqueue_for(
        CHILD_MODEL,
        ToolCalls([Call("read_file", {"path": "old.txt"})]),
        ToolCalls(
            [
                Call("write_file", {"path": "old.txt", "content": "after\n"}),
                Call("write_file", {"path": "new.txt", "content": "new\n"}),
            ]
        ),
        Text("wrote both"),
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        await drive(session.run_turn("go"))
        assert (workspace / "old.txt").read_text() == "after\n"
        outcome = session.history.undo()
    finally:
        await session.aclose()
    assert outcome is not None
    assert (workspace / "old.txt").read_text() == "before\n"
    assert not (workspace / "new.txt").exists()


async def test_a_second_child_cannot_overwrite_a_file_the_first_changed_unseen(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    write_agent(workspace, "writer")
    (workspace / "shared.txt").write_text("original\n")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls([task_call("writer", "edit A", "t1"), task_call("writer", "edit B", "t2")]),
        Text("ok"),
    )

    # Each child reads the file at once, then writes it later (B after A): B's write comes
    # after A changed the file B read.
    def child_reply(request: RecordedRequest) -> Reply:
        text = request.text()
        first = "edit A" in text
        roles = [message["role"] for message in request.messages]
        if roles[-1] == "user":
            return ToolCalls([Call("read_file", {"path": "shared.txt"})])
        if roles.count("tool") == 1:
            content = "first\n" if first else "second\n"
            return ToolCalls(
                [Call("write_file", {"path": "shared.txt", "content": content})],
                delay=0.5 if first else 1.5,
            )
        return Text("done")

    llm_server.guard = lambda request: (
        child_reply(request) if request.model == CHILD_MODEL else None
    )
    session = build_session(settings_for(llm_server), workspace, SessionOptions(approve_all=True))
    try:
        events = await drive(session.run_turn("go"))
    finally:
        await session.aclose()
    writes = [
        e.event
        for e in child_events(events)
        if isinstance(e.event, ToolCallFinished) and e.event.call.name == "write_file"
    ]
    assert len(writes) == 2
    assert (workspace / "shared.txt").read_text() == "first\n"
    refused = [w for w in writes if w.is_error]
    assert len(refused) == 1 and "changed" in refused[0].result.lower()


async def test_a_child_with_provider_summarization_runs_on_the_summarization_server(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """`provider: summarization` sends the child to the server summaries go to (its own key
    here), on the summarization model unless the definition names one."""
    write_agent(workspace, "cheap", model="inherit", extra="provider: summarization\n")
    llm_server.enqueue_for(
        PARENT_MODEL, ToolCalls([task_call("cheap", "look", "t1")]), Text("done")
    )
    llm_server.enqueue_for("summary-model", Text("looked"))
    settings = settings_for(llm_server)
    llm = settings.llm.model_copy(
        update={
            "summarization_model": "summary-model",
            "summarization_api_key": SecretStr("sk-summaries-0123456789"),
        }
    )
    session = build_session(settings.model_copy(update={"llm": llm}), workspace)
    try:
        await drive(session.run_turn("look cheaply"))
    finally:
        await session.aclose()
    [child] = llm_server.requests_for("summary-model")
    assert child.headers["authorization"] == "Bearer sk-summaries-0123456789"
    assert "looked" in str(llm_server.requests_for(PARENT_MODEL)[1].messages[-1])


def test_an_unknown_provider_is_reported_by_file_and_field(workspace: Path) -> None:
    path = write_agent(workspace, "odd", extra="provider: elsewhere\n")
    found = load_agent_definitions(workspace)
    assert "odd" not in found.names()
    assert any(str(path) in p and "`provider` 'elsewhere'" in p for p in found.problems)


async def test_a_brief_that_asks_for_it_carries_the_parents_work_ledger(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    """Issue 37 (docs/adr/0050): `work_ledger: true` appends what the parent did so far."""
    write_agent(workspace, "finder", body="Find things.")
    (workspace / "notes.txt").write_text("alpha\n")
    llm_server.enqueue_for(
        PARENT_MODEL,
        ToolCalls([Call("read_file", {"path": "notes.txt"}, id="r1")]),
        ToolCalls(
            [
                Call("task", {"agent": "finder", "prompt": "go on", "work_ledger": True}, id="t1"),
                Call("task", {"agent": "finder", "prompt": "plain"}, id="t2"),
            ]
        ),
        Text("done"),
    )
    llm_server.enqueue_for(CHILD_MODEL, Text("one"), Text("two"))
    session = build_session(settings_for(llm_server), workspace)
    try:
        await drive(session.run_turn("read the notes, then delegate"))
    finally:
        await session.aclose()
    briefs = [str(r.messages[-1]["content"]) for r in llm_server.requests_for(CHILD_MODEL)]
    asked = next(brief for brief in briefs if brief.startswith("go on"))
    plain = next(brief for brief in briefs if brief.startswith("plain"))
    assert "What this session has done so far:" in asked and "Files read: notes.txt" in asked
    assert plain == "plain"
