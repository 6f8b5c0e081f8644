"""A resumed session tells the truth: every tool call the chat shows renders the outcome the
session recorded (exit code, rejection and its reason, failure, cancellation, edit line
counts), never a blanket "done"."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.app import ForgeApp
from forge.tui.history import INTERRUPTED_TURN_NOTE
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.widgets.chat_blocks import ToolCallBlock
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    configure,
    install_gate,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)
CONFIG = {
    "tools": {
        "command_allowlist": ["sh -c", GATE_COMMAND],
        "auto_approve": ["read_file", "write_file"],
    }
}


def outcomes(blocks: list[ToolCallBlock]) -> list[tuple[str, str, str]]:
    return [(b.call.name, b.status, b.status_text) for b in blocks]


async def test_a_resumed_session_shows_each_tool_calls_true_outcome(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    install_gate(workspace)
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "sh -c 'exit 0'"})]),
        ToolCalls([Call("execute_command", {"command": "sh -c 'exit 3'"})]),
        ToolCalls([Call("write_file", {"path": "notes.txt", "content": "a\nb\n"})]),
        ToolCalls([Call("execute_command", {"command": "rm -rf build"})]),
        ToolCalls([Call("read_file", {"path": "missing.txt"})]),
        Text("All done."),
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]),
    )
    store = configure(llm_server, monkeypatch, config=CONFIG)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "do the things")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "the dialog")
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"not the build dir", "enter")
        await wait_idle(pilot)
        await submit(pilot, "run the gate")
        await wait_until(
            pilot,
            lambda: any(b.output for b in app.chat.query(ToolCallBlock) if b.status == "running"),
            "the gated command to run",
        )
        await pilot.press("escape")
        await wait_idle(pilot)
        live = outcomes(list(app.chat.query(ToolCallBlock)))

    expected = [
        ("execute_command", "ok", "exit 0"),
        ("execute_command", "error", "exit 3"),
        ("write_file", "ok", "+2 -0"),
        ("execute_command", "rejected", "rejected by user: not the build dir"),
        ("read_file", "error", "failed"),
    ]
    assert live[:5] == expected, "what the live chat showed"

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = outcomes(list(resumed.chat.query(ToolCallBlock)))
        told = notices(resumed)
    assert shown[:5] == expected
    interrupted = ("execute_command", "error", "interrupted")
    assert live[5] == shown[5] == interrupted, "the command the user stopped, as it was shown"
    assert len(shown) == 6
    # The user stopped the last turn: the resumed chat says so, as the live one did.
    resumed_line = f"Resumed session `{resumed.session.session_id}`."
    assert told[told.index(resumed_line) - 1] == INTERRUPTED_TURN_NOTE
    assert not any("ended before the model's answer" in text for text in told)


async def test_a_session_cut_off_mid_turn_says_so_to_the_user_and_the_model(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from forge.agent.history.session_file import SessionStore
    from forge.context.conversation import Conversation
    from forge.llm.messages import ToolCall, assistant, user
    from forge.tui.widgets.chat_blocks import NoticeBlock
    from tests.tui.test_app_helpers import notices

    # What a kill -9 while the approval dialog was open leaves: a call with no result.
    log = SessionStore().create(workspace, "gpt-4o-mini")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(user("write the notes"))
    call = ToolCall("call_w", "write_file", '{"path": "notes.txt", "content": "x"}')
    conversation.append(assistant("", (call,)))

    llm_server.enqueue(Text("Picking up again."))
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace, resume_latest=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert outcomes(list(app.chat.query(ToolCallBlock))) == [
            ("write_file", "error", "cancelled")
        ]
        cut_off = [n for n in app.chat.query(NoticeBlock) if "was cut off" in n.text]
        assert cut_off, notices(app)
        await submit(pilot, "go on")
        await wait_idle(pilot)
    sent = llm_server.requests[0].text()
    assert "the previous turn was cut off" in sent
    assert not (workspace / "notes.txt").exists()


async def test_a_resumed_session_shows_its_context_size_before_the_first_request(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("A long answer. " * 200))
    store = configure(llm_server, monkeypatch, config=CONFIG)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "explain")
        await wait_idle(pilot)
        live_tokens = app.status.gauge.current_tokens
    requests = len(llm_server.requests)

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.session_ready.is_set(), "the session")
        await pilot.pause()
        gauge = resumed.status.gauge
        assert gauge.max_tokens > 0
        assert gauge.current_tokens >= live_tokens * 0.9, (gauge.current_tokens, live_tokens)
    assert len(llm_server.requests) == requests, "no request was needed to know it"


async def test_a_resumed_session_shows_its_token_and_cost_totals_and_counts_on(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from textual.widgets import Static

    def usage(app: ForgeApp) -> str:
        return str(app.status.query_one("#usage", Static).render())

    llm_server.enqueue(
        Text("First.", prompt_tokens=12_000, completion_tokens=300),
        Text("Second.", prompt_tokens=1_000, completion_tokens=200),
    )
    store = configure(llm_server, monkeypatch, config={"llm": {"model": "gpt-4o-mini"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first")
        await wait_idle(pilot)
        live_usage, live_cost = usage(app), app.status.cost_view.text
    assert live_usage == "in  12.0k tokens\nout 300 tokens"
    assert "?" not in live_cost and "$" in live_cost

    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: resumed.session_ready.is_set(), "the session")
        await pilot.pause()
        assert usage(resumed) == live_usage, "the session's totals, not this run's zero"
        assert resumed.status.cost_view.text == live_cost
        await submit(pilot, "second")
        await wait_idle(pilot)
        assert usage(resumed) == "in  13.0k tokens\nout 500 tokens"
