"""Approvals over `session/request_permission`: asked exactly when Forge's policy asks, with
allow once / allow always / reject, the edit's diff shown; modes as ACP session modes.
Forge writes files itself (never through the editor's `fs` capability; ADR 0044)."""

from __future__ import annotations

from pathlib import Path

from tests.acp.conftest import RecordingClient, forge_acp, forge_environment, prompt_of
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls


def _write(path: str, content: str) -> ToolCalls:
    return ToolCalls([Call("write_file", {"path": path, "content": content})])


async def test_an_approved_write_is_asked_with_its_diff_and_written_by_forge(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("old line\n")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),  # Forge writes what it read
        _write("notes.txt", "new line\n"),
        Text("Written."),
    )
    client = RecordingClient(answers=["allow_once"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        answer = await connection.prompt(
            session_id=session.session_id, prompt=prompt_of("change notes")
        )
    assert answer.stop_reason == "end_turn"
    assert (workspace / "notes.txt").read_text() == "new line\n"
    [(tool_call, options)] = client.questions
    assert [option.kind for option in options] == ["allow_once", "allow_always", "reject_once"]
    diff = next(c for c in tool_call.content or [] if c.type == "diff")
    assert diff.path == str(workspace / "notes.txt")
    assert diff.old_text == "old line\n" and diff.new_text == "new line\n"
    # The card goes pending → in progress → completed, with the diff.
    read, started = client.of_kind("tool_call")
    assert read.kind == "read" and started.kind == "edit" and started.status == "pending"
    statuses = [
        u.status
        for u in client.of_kind("tool_call_update")
        if u.tool_call_id == started.tool_call_id
    ]
    assert statuses == ["in_progress", "completed"]
    finished = client.of_kind("tool_call_update")[-1]
    assert any(c.type == "diff" and c.new_text == "new line\n" for c in finished.content)
    assert client.file_requests == []  # Forge wrote the file itself


async def test_a_rejected_write_is_not_made_and_the_model_reads_why(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(_write("new.txt", "x\n"), Text("Understood."))
    client = RecordingClient(answers=["reject"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("write"))
    assert not (workspace / "new.txt").exists()
    assert client.of_kind("tool_call_update")[-1].status == "failed"
    tool_result = [m for m in llm_server.requests[1].messages if m["role"] == "tool"][-1]
    assert "rejected" in tool_result["content"]


async def test_allow_always_stops_asking_for_that_tool_in_the_session(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(_write("a.txt", "a\n"), _write("b.txt", "b\n"), Text("Both."))
    client = RecordingClient(answers=["allow_always"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        await connection.prompt(session_id=session.session_id, prompt=prompt_of("write two"))
    assert len(client.questions) == 1
    assert (workspace / "a.txt").read_text() == "a\n" and (workspace / "b.txt").read_text() == "b\n"


async def test_session_modes_decide_what_is_asked(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        _write("edit.txt", "e\n"),
        ToolCalls([Call("execute_command", {"command": "touch ran.txt"})]),
        Text("Done."),
        _write("blocked.txt", "b\n"),
        Text("Read-only."),
    )
    client = RecordingClient(answers=["reject"])
    async with forge_acp(client, forge_environment(llm_server), workspace=workspace) as (
        connection,
        _,
    ):
        session = await connection.new_session(cwd=str(workspace), mcp_servers=[])
        sid = session.session_id
        await connection.set_session_mode(session_id=sid, mode_id="accept-edits")
        await connection.prompt(session_id=sid, prompt=prompt_of("edit and run"))
        asked_in_accept_edits = [tool_call.title for tool_call, _ in client.questions]
        await connection.set_session_mode(session_id=sid, mode_id="read-only")
        await connection.prompt(session_id=sid, prompt=prompt_of("edit again"))
    # accept-edits: the edit ran unasked; the command asked (and was rejected).
    assert (workspace / "edit.txt").read_text() == "e\n"
    assert len(asked_in_accept_edits) == 1 and "touch ran.txt" in asked_in_accept_edits[0]
    assert not (workspace / "ran.txt").exists()
    # read-only: refused without a question.
    assert len(client.questions) == 1
    assert not (workspace / "blocked.txt").exists()
    last = client.of_kind("tool_call_update")[-1]
    assert last.status == "failed"
