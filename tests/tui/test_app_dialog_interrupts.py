"""Esc (or Ctrl+C once) in a dialog that belongs to a turn ends the turn (issue 18 item 2,
ADR 0031): the waiting call and the calls after it are recorded as cancelled — never ran, not
"rejected by user" — no further request reaches the model, the chat says the turn was
interrupted, and the session file holds the same results, so a resume shows the same.

Real app, real loopback server, real files; ask mode and accept-edits mode, and an open
`ask_question`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message

from forge.agent.history.session_file import SessionStore
from forge.agent.turn.interruption import NOT_RUN_RESULT, UNANSWERED_QUESTION_RESULT
from forge.tui.messages import ApprovalRequestedShown, TurnEnded
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.widgets.chat import INTERRUPTED_NOTE
from forge.tui.widgets.chat_blocks import ToolCallBlock
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)
KEYS = ["escape", "ctrl+c"]


def outcomes(app_blocks: list[ToolCallBlock]) -> list[tuple[str, str, str]]:
    return [(b.call.name, b.status, b.status_text) for b in app_blocks]


def recorded_results(session_id: str) -> list[tuple[str | None, str, bool, bool]]:
    """(tool, content, cancelled, not_run) of every tool result in the session file."""
    conversation = SessionStore().load(session_id)
    assert conversation.is_valid(), conversation.problems()
    return [
        (m.name, m.content, bool(m.meta.get("cancelled")), bool(m.meta.get("not_run")))
        for m in conversation
        if m.role == "tool"
    ]


@pytest.mark.parametrize("key", KEYS)
async def test_esc_in_the_approval_dialog_ends_the_turn_in_ask_mode(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, key: str
) -> None:
    llm_server.enqueue(
        ToolCalls(
            [
                Call("write_file", {"path": "one.txt", "content": "1\n"}),
                Call("write_file", {"path": "two.txt", "content": "2\n"}),
            ]
        ),
        Text("The model must not be asked again."),
    )
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "write two files")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press(key)
        await wait_idle(pilot, "the turn to end")
        await pilot.pause()
        assert not isinstance(app.screen, ApprovalScreen), "no second dialog"
        assert sum(isinstance(m, ApprovalRequestedShown) for m in seen) == 1
        assert [m.reason for m in seen if isinstance(m, TurnEnded)] == ["cancelled"]
        assert app.is_running, "one Ctrl+C ends the turn, not Forge"
        live = outcomes(list(app.chat.query(ToolCallBlock)))
        assert live == [
            ("write_file", "error", "cancelled"),
            ("write_file", "error", "cancelled"),
        ]
        assert INTERRUPTED_NOTE in notices(app)
        assert app.session.agent.conversation.is_valid()
        session_id = app.session.session_id
    assert len(llm_server.requests) == 1, "no request after the user ended the turn"
    assert not (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    assert recorded_results(session_id) == [
        ("write_file", NOT_RUN_RESULT, True, True),
        ("write_file", NOT_RUN_RESULT, True, True),
    ]
    assert not any("rejected" in content for _, content, _, _ in recorded_results(session_id))

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert outcomes(list(resumed.chat.query(ToolCallBlock))) == live


@pytest.mark.parametrize("key", KEYS)
async def test_esc_in_accept_edits_mode_stops_the_writes_that_would_run_unasked(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, key: str
) -> None:
    # The first write runs without asking; the command asks; the second write would have run
    # without asking had the turn gone on.
    llm_server.enqueue(
        ToolCalls(
            [
                Call("write_file", {"path": "first.txt", "content": "ran\n"}),
                Call("execute_command", {"command": "touch command-ran.txt"}),
                Call("write_file", {"path": "after.txt", "content": "never\n"}),
            ]
        ),
        Text("The model must not be asked again."),
    )
    store = configure(llm_server, monkeypatch, config={"tools": {"mode": "accept-edits"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "edit and run")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        dialog = app.screen
        assert isinstance(dialog, ApprovalScreen)
        assert dialog.request.call.name == "execute_command"
        await pilot.press(key)
        await wait_idle(pilot, "the turn to end")
        await pilot.pause()
        assert outcomes(list(app.chat.query(ToolCallBlock))) == [
            ("write_file", "ok", "+1 -0"),
            ("execute_command", "error", "cancelled"),
            ("write_file", "error", "cancelled"),
        ]
        assert INTERRUPTED_NOTE in notices(app)
        session_id = app.session.session_id
    assert len(llm_server.requests) == 1
    assert (workspace / "first.txt").read_text() == "ran\n"
    assert not (workspace / "command-ran.txt").exists()
    assert not (workspace / "after.txt").exists()
    results = recorded_results(session_id)
    assert results[0][0] == "write_file" and not results[0][2]
    assert results[1:] == [
        ("execute_command", NOT_RUN_RESULT, True, True),
        ("write_file", NOT_RUN_RESULT, True, True),
    ]


@pytest.mark.parametrize("key", KEYS)
async def test_esc_in_an_open_question_ends_the_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, key: str
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("ask_question", {"question": "Which name?"})]),
        Text("The model must not be asked again."),
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "name it")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press(key)
        await wait_idle(pilot, "the turn to end")
        await pilot.pause()
        assert not isinstance(app.screen, QuestionScreen)
        assert [m.reason for m in seen if isinstance(m, TurnEnded)] == ["cancelled"]
        assert INTERRUPTED_NOTE in notices(app)
        session_id = app.session.session_id
    assert len(llm_server.requests) == 1
    assert recorded_results(session_id) == [
        ("ask_question", UNANSWERED_QUESTION_RESULT, True, False)
    ]


async def test_the_session_goes_on_after_a_turn_ended_in_its_dialog(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]), Text("Next answer.")
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("escape")
        await wait_idle(pilot)
        await submit(pilot, "never mind, just answer")
        await wait_idle(pilot)
    # The next request carries the cancelled call, answered, then the new message.
    sent = llm_server.requests[1].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "user"]
    assert sent[3]["content"] == NOT_RUN_RESULT


async def test_esc_while_typing_a_reason_ends_the_turn_too(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        ToolCalls([Call("write_file", {"path": "x.txt", "content": "x"})]), Text("unused")
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("n", *"half a reas")
        await pilot.press("escape")
        await wait_idle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        session_id = app.session.session_id
    assert len(llm_server.requests) == 1
    assert recorded_results(session_id) == [("write_file", NOT_RUN_RESULT, True, True)]
