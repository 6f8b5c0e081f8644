"""Steering in the real app (issue 40): Alt+S during a turn adds the prompt's text to the
running turn (shown in the chat where it was added, as the user's message, not queued); the
footer offers `steer` only while a turn runs; Up on an empty prompt during a turn first takes
back the queued message; a steered message the turn ended without adding goes back to the
prompt after Esc (docs/adr/0057)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.settings import SettingsScreen
from forge.tui.widgets.chat_blocks import AssistantBlock, UserMessageBlock
from forge.tui.widgets.prompt_input import PromptInput
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app import SIZE, footer_actions, running_output
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    GATE_CONFIG,
    configure,
    install_gate,
    make_app,
    submit,
    wait_idle,
    wait_until,
)


async def test_alt_s_steers_the_prompt_into_the_running_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    release = install_gate(workspace)
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]), Text("used v2")
    )
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_idle(pilot)
        assert "steer" not in footer_actions(app)
        await submit(pilot, "call the API")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        assert "steer" in footer_actions(app) and "background_command" in footer_actions(app)
        # F1 and F2 give their labels to steer and bg at 80 columns, and still work.
        assert "help" not in footer_actions(app) and "open_settings" not in footer_actions(app)
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "settings")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), "closed")
        app.query_one(PromptInput).insert("use v2")
        await pilot.press("alt+s")
        assert app.query_one(PromptInput).text == "" and app.queued == []
        release.touch()
        await wait_until(pilot, lambda: len(llm_server.requests) == 2, "the next request")
        await wait_idle(pilot)
        order = [
            f"user:{b.text}" if isinstance(b, UserMessageBlock) else f"answer:{b.answer_text}"
            for b in app.chat.children
            if isinstance(b, UserMessageBlock | AssistantBlock)
        ]
        assert order[-2:] == ["user:use v2", "answer:used v2"]
        assert not any(b.has_class("-queued") for b in app.chat.query(UserMessageBlock))
        assert "steer" not in footer_actions(app)
    assert llm_server.requests[1].messages[-1] == {"role": "user", "content": "use v2"}


async def test_up_on_an_empty_prompt_takes_back_the_queued_message_first(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    release = install_gate(workspace)
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]))
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first task")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        await submit(pilot, "second task")
        assert [text for text, _ in app.queued] == ["second task"]
        prompt = app.query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "second task" and app.queued == []
        assert not any(b.has_class("-queued") for b in app.chat.query(UserMessageBlock))
        prompt.clear()
        await pilot.press("up")  # nothing queued now: the history, as before
        assert prompt.text == "second task"
        release.touch()
        await wait_idle(pilot)


async def test_a_steered_message_not_added_before_esc_is_back_in_the_prompt(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    install_gate(workspace)
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]))
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        prompt = app.query_one(PromptInput)
        prompt.insert("use v2")
        await pilot.press("alt+s")
        assert prompt.text == ""
        await pilot.press("escape")
        await wait_idle(pilot)
        assert prompt.text == "use v2"
    assert len(llm_server.requests) == 1


async def test_clear_ends_background_commands_and_says_which(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    """Issue 40: nothing outlives the session; `/clear` says what it ended."""
    from forge.agent.tools.process_groups import group_alive
    from forge.tui.widgets.chat_blocks import NoticeBlock

    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "sleep 1000", "background": True})]),
        Text("started"),
    )
    config = {"tools": {"command_allowlist": ["sleep 1000"]}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "start a sleeper")
        await wait_until(pilot, lambda: len(llm_server.requests) == 2, "the answer")
        await wait_idle(pilot)
        background = app.session.background
        assert background is not None
        (entry,) = background.running()
        await pilot.pause(0.6)  # the status pane's count refreshes twice a second
        assert app.status.background_view.text == "background 1 running · /tasks"
        await submit(pilot, "/clear")
        said = "Ended background command bg1 `sleep 1000` (clear)"
        await wait_until(
            pilot,
            lambda: any(said in b.text for b in app.chat.query(NoticeBlock)),
            "the notice",
        )
        assert not entry.running and not group_alive(entry.process.pid)
