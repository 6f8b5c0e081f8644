"""A resumed session shows what the live chat showed (issue 18, item 1; docs/adr/0032): the
same session is run live and then reopened with `--continue`, and the two chats are compared
block by block — user messages, answers (a `task_completion` or `converse` is the answer, an
`ask_question` the question and its reply), tool rows with their statuses and exit codes, and
the notes under turns — for completed, rejected, refused, cancelled and interrupted turns."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

from forge.agent.modes import PermissionMode
from forge.agent.turn.circuit_breaker import DEFAULT_IDENTICAL_ERROR_LIMIT
from forge.tui.app import ForgeApp
from forge.tui.history import INTERRUPTED_TURN_NOTE
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.widgets.chat_blocks import (
    AssistantBlock,
    NoticeBlock,
    SummaryBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from forge.tui.widgets.welcome import READY_HINT
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    configure,
    install_gate,
    make_app,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)
CONFIG = {"tools": {"command_allowlist": [GATE_COMMAND, "sh -c"], "auto_approve": ["read_file"]}}


def block_row(block: Widget) -> str | None:
    """One line saying what a chat block shows (None for blocks that are not the session's:
    the ready hint, the "Resumed session" line)."""
    if isinstance(block, UserMessageBlock):
        return f"user: {block.text}"
    if isinstance(block, AssistantBlock):
        return f"answer: {block.answer_text.strip()} | thinking: {block.reasoning_text.strip()}"
    if isinstance(block, ToolCallBlock):
        return f"tool: {block.call.name} {block.status} {block.status_text}"
    if isinstance(block, SummaryBlock):
        return f"summary: {block.replaced}"
    if isinstance(block, NoticeBlock):
        if block.text == READY_HINT or block.text.startswith("Resumed session"):
            return None
        return f"notice[{block.kind}]: {block.text}"
    return f"other: {type(block).__name__}"


def chat_rows(app: ForgeApp) -> list[str]:
    """The chat's blocks, top to bottom, as `block_row` lines."""
    rows = (block_row(block) for block in app.chat.children)
    return [row for row in rows if row is not None]


async def set_mode(pilot: Pilot[Any], app: ForgeApp, mode: PermissionMode) -> None:
    """Press the mode key until the policy is in `mode`."""
    for _ in PermissionMode:
        if app.session.policy.mode is mode:
            return
        before = app.session.policy.mode
        await pilot.press("ctrl+t")
        await wait_until(pilot, partial(_mode_left, app, before), "a mode change")
    assert app.session.policy.mode is mode


def _mode_left(app: ForgeApp, mode: PermissionMode) -> bool:
    return app.session.policy.mode is not mode


async def test_the_resumed_chat_matches_the_live_chat_turn_by_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    install_gate(workspace)
    (workspace / "notes.txt").write_text("one\ntwo\n", encoding="utf-8")
    llm_server.enqueue(
        # 1. completed: a tool, then task_completion carries the answer
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),
        ToolCalls([Call("task_completion", {"result": "The notes hold **two** lines."})]),
        # 2. rejected: the user says no, the model answers in plain text
        ToolCalls([Call("execute_command", {"command": "rm -rf build"})]),
        Text("Understood, the build directory stays."),
        # 3. refused: read-only mode refuses a write without asking; a converse answers
        ToolCalls([Call("write_file", {"path": "out.txt", "content": "x\n"})]),
        ToolCalls([Call("converse", {"message": "I cannot write in read-only mode."})]),
        # 4. a question and its answer, then a command that exits 3, then an answer
        ToolCalls([Call("ask_question", {"question": "Which file next?"})]),
        ToolCalls([Call("execute_command", {"command": "sh -c 'exit 3'"})]),
        Text("The check failed with exit code 3.", reasoning="It exited 3."),
        # 5. cancelled: the user stops a running command
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]),
        # 6. interrupted: the user stops the answer while it streams
        Text("A long answer that goes on. " * 60, chunk_size=8, chunk_delay=0.05),
    )
    store = configure(llm_server, monkeypatch, config=CONFIG)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "count the notes")
        await wait_idle(pilot)

        await submit(pilot, "clean the build")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the approval")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"not now", "enter")
        await wait_idle(pilot)

        await set_mode(pilot, app, PermissionMode.READ_ONLY)
        await submit(pilot, "write the output")
        await wait_idle(pilot)
        await set_mode(pilot, app, PermissionMode.ASK)

        await submit(pilot, "check it")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press(*"notes.txt", "enter")
        await wait_idle(pilot)

        await submit(pilot, "wait for the gate")
        await wait_until(
            pilot,
            lambda: any("waiting" in b.output for b in app.chat.query(ToolCallBlock)),
            "the gated command to run",
        )
        await pilot.press("escape")
        await wait_idle(pilot)

        await submit(pilot, "explain at length")
        await wait_until(
            pilot,
            lambda: any(len(b.answer_text) > 40 for b in app.chat.query(AssistantBlock)),
            "the answer to stream",
        )
        await pilot.press("escape")
        await wait_idle(pilot)
        live = chat_rows(app)

    # What the live chat showed, so the comparison below compares the right things.
    assert "answer: The notes hold **two** lines. | thinking: " in live
    assert "tool: read_file ok done" in live
    assert "tool: execute_command rejected rejected by user: not now" in live
    assert "tool: write_file rejected refused (read-only mode)" in live
    assert "answer: I cannot write in read-only mode. | thinking: " in live
    assert "notice[info]: **Question:** Which file next?" in live
    assert "user: notes.txt" in live
    assert "tool: execute_command error exit 3" in live
    assert "tool: execute_command error interrupted" in live
    assert live.count(f"notice[info]: {INTERRUPTED_TURN_NOTE}") == 2
    assert not any("task_completion" in row or "converse" in row for row in live)

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        shown = chat_rows(resumed)
    assert shown == live
    assert not any("ended before the model's answer" in row for row in shown)


async def test_a_stopped_turn_says_it_has_no_answer_and_a_completed_one_does_not(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """The "ended before the model's answer" note appears only where that is true."""
    llm_server.enqueue(
        ToolCalls([Call("task_completion", {"result": "Done at once."})]),
        *[
            ToolCalls([Call("read_file", {"path": "missing.txt"})])
            for _ in range(DEFAULT_IDENTICAL_ERROR_LIMIT)
        ],
    )
    store = configure(llm_server, monkeypatch, config=CONFIG)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "finish")
        await wait_idle(pilot)
        await submit(pilot, "read the missing file")
        await wait_idle(pilot)
        live = chat_rows(app)
    assert live[-1] == "notice[error]: Stopped: the same failing call kept repeating."

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        shown = chat_rows(resumed)
    # Up to the turn's end the chats agree; the session does not record what stopped it.
    assert shown[:-1] == live[:-1]
    assert shown[1] == "answer: Done at once. | thinking: "
    assert shown[-1].startswith("notice[info]: The last turn ended before the model's answer")
    assert sum("ended before the model's answer" in row for row in shown) == 1


async def test_a_forge_run_session_resumed_in_the_tui_shows_its_answer_as_an_answer(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Issue 18's first report: `forge run` ended with task_completion; `--resume ID` showed
    a task_completion tool row and the "ended before the model's answer" note."""
    from tests.headless.test_headless import jsonl
    from tests.headless.test_headless_sessions import forge

    (workspace / "notes.txt").write_text("one\n", encoding="utf-8")
    llm_server.enqueue(
        ToolCalls([Call("read_file", {"path": "notes.txt"})]),
        ToolCalls([Call("task_completion", {"result": "The notes hold one line."})]),
    )
    ran = forge(llm_server, workspace, "run", "--output", "jsonl", "count the notes")
    assert ran.returncode == 0, ran.stderr
    session_id = jsonl(ran)[0]["session_id"]

    configure(llm_server, monkeypatch)
    app = ForgeApp(workspace=workspace, session_id=session_id)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        await pilot.pause()
        shown = chat_rows(app)
    assert shown == [
        "user: count the notes",
        "tool: read_file ok done",
        "answer: The notes hold one line. | thinking: ",
    ]


async def test_the_users_own_commands_reopen_as_the_command_rows_they_were(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("Noted."))
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "!echo hi")
        await wait_idle(pilot)
        await submit(pilot, "!sh -c 'exit 3'")
        await wait_idle(pilot)
        await submit(pilot, "what did I run?")
        await wait_idle(pilot)
        live = chat_rows(app)
        live_outputs = [b.output for b in app.chat.query(ToolCallBlock)]
    assert live[:2] == ["tool: ! ok exit 0", "tool: ! error exit 3"]

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.chat.children, "the history")
        await pilot.pause()
        assert chat_rows(resumed) == live
        assert [b.output for b in resumed.chat.query(ToolCallBlock)] == live_outputs
