"""Approval and question dialogs in the real app: approve once or always, reject with a
reason, suggestions answer questions; the agent always hears back. (Esc in a dialog ends the
turn: test_app_dialog_interrupts.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Button, Input, Static

from forge.agent.events import ToolCallFinished
from forge.tui.messages import ApprovalRequestedShown, QuestionAskedShown, TurnEnded
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.widgets.chat_blocks import ToolCallBlock, UserMessageBlock
from forge.tui.widgets.diff_view import DiffView
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    configure,
    events_of,
    make_app,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def write_call(path: str = "notes.txt", content: str = "hello\n") -> ToolCalls:
    return ToolCalls([Call("write_file", {"path": path, "content": content})])


def tool_result_sent(server: OpenAIServer, request_index: int) -> str:
    """The content of the tool result in the given request."""
    messages = server.requests[request_index].messages
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "tool")


async def test_approve_once_runs_the_edit_and_shows_its_diff(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(write_call(), Text("Wrote it."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.call.name == "write_file"
        assert "+hello" in dialog.query_one(DiffView).diff, "the dialog previews the diff"
        summary = dialog.query_one("#approval-summary", Static)
        assert "notes.txt" in str(summary.render()), "an edit names its file above the diff"
        assert app.chat.query_one(ToolCallBlock).status == "pending"
        await pilot.press("y")
        await wait_idle(pilot)
        assert any(isinstance(m, ApprovalRequestedShown) for m in seen)
        assert (workspace / "notes.txt").read_text() == "hello\n"
        block = app.chat.query_one(ToolCallBlock)
        assert block.status == "ok"
        assert "+hello" in block.query_one(DiffView).diff
    assert "notes.txt" in tool_result_sent(llm_server, 1)


async def test_reject_with_a_reason_tells_the_model_why(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(write_call(), Text("Understood."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("n")
        reason = app.screen.query_one("#reject-reason", Input)
        await wait_until(pilot, lambda: reason.has_focus, "the reason field to take focus")
        await pilot.press(*"use docs/ instead", "enter")
        await wait_idle(pilot)
        block = app.chat.query_one(ToolCallBlock)
        assert block.status == "rejected"
        assert block.status_text == "rejected by user: use docs/ instead", "the title says why"
    assert not (workspace / "notes.txt").exists()
    assert tool_result_sent(llm_server, 1) == "rejected by user: use docs/ instead"


async def test_a_reason_left_empty_still_rejects_and_says_none_was_given(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(write_call(), Text("Fine."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("n")
        reason = app.screen.query_one("#reject-reason", Input)
        await wait_until(pilot, lambda: reason.has_focus, "the reason field to take focus")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        finished = events_of(seen, ToolCallFinished)
        assert finished[0].metadata.get("rejected") is True
    assert not (workspace / "notes.txt").exists()
    assert tool_result_sent(llm_server, 1) == "rejected by user: no reason given"


async def test_approve_always_skips_the_dialog_for_that_tool_afterwards(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(write_call("a.txt"), write_call("b.txt"), Text("Both written."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "write two files")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.click("#approve-always")
        await wait_idle(pilot)
        assert sum(isinstance(m, ApprovalRequestedShown) for m in seen) == 1
        assert [b.status for b in app.chat.query(ToolCallBlock)] == ["ok", "ok"]
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()


async def test_question_suggestion_answers_the_agent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    question = {"question": "Which database?", "suggestions": ["SQLite", "Postgres [prod]"]}
    llm_server.enqueue(ToolCalls([Call("ask_question", question)]), Text("Postgres it is."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "set up storage")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        buttons = [str(b.label) for b in app.screen.query(Button)]
        assert buttons == ["SQLite", "Postgres [prod]"]
        await pilot.click("#suggestion-1")
        await wait_idle(pilot)
        assert any(isinstance(m, QuestionAskedShown) for m in seen)
        assert [b.text for b in app.chat.query(UserMessageBlock)][-1] == "Postgres [prod]"
    assert tool_result_sent(llm_server, 1) == "Postgres [prod]"


async def test_question_free_text(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    ask = ToolCalls([Call("ask_question", {"question": "Name?"})])
    llm_server.enqueue(ask, Text("Thanks."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press(*"Ada", "enter")
        await wait_idle(pilot)
    assert tool_result_sent(llm_server, 1) == "Ada"


async def test_an_interrupt_while_a_dialog_is_open_closes_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(write_call(), Text("unused"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        app.action_interrupt()  # what Esc does outside a dialog
        await wait_idle(pilot)
        await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen), "closing")
        assert [m.reason for m in seen if isinstance(m, TurnEnded)] == ["cancelled"]
        assert app.session.agent.conversation.is_valid()
    assert not (workspace / "notes.txt").exists()
    assert len(llm_server.requests) == 1


async def test_a_command_is_shown_once_in_its_dialog(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "echo approved-output"})]), Text("Ran.")
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "run it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        dialog = app.screen
        preview = dialog.query_one(".command-preview", Static)
        assert "echo approved-output" in str(preview.render())
        assert not dialog.query("#approval-summary"), "no second line repeating the command"
        await pilot.press("y")
        await wait_idle(pilot)
        block = app.chat.query_one(ToolCallBlock)
        assert (block.status, block.status_text) == ("ok", "exit 0")
        assert "approved-output" in block.output
