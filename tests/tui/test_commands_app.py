"""Slash commands in the real app: /context, /model, /clear, /sessions, /help, /quit,
/settings, unknown commands, the palette, and refusals while a turn runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.command import CommandPalette
from textual.widgets import OptionList

from forge.tui.screens.help import HelpScreen
from forge.tui.screens.sessions import SessionsScreen
from forge.tui.widgets.chat_blocks import AssistantBlock, NoticeBlock, UserMessageBlock
from forge.tui.widgets.formatting import format_tokens
from tests.support.openai_server import Call, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    GATE_CONFIG,
    configure,
    install_gate,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def one_option(app: App[object]) -> bool:
    """True once the open command palette lists exactly one command."""
    screen = app.screen
    return isinstance(screen, CommandPalette) and screen.query_one(OptionList).option_count == 1


async def test_unknown_command_gets_a_clear_message_and_sends_nothing(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/frobnicate now")
        await pilot.pause()
        errors = [b.text for b in app.chat.query(NoticeBlock) if b.kind == "error"]
        assert len(errors) == 1
        assert "Unknown command /frobnicate" in errors[0] and "/help" in errors[0]
        assert not app.busy
    assert llm_server.requests == []


async def test_a_double_slash_sends_the_text_as_a_message(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("It is a path."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "//etc/hosts what is it")
        await wait_idle(pilot)
    assert llm_server.requests[0].messages[-1]["content"] == "/etc/hosts what is it"


async def test_context_shows_the_breakdown(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n" * 50)
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "a.txt"})]), Text("Read it."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read a.txt")
        await wait_idle(pilot)
        await submit(pilot, "/context")
        await pilot.pause()
        report = notices(app)[-1]
        for part in ("System prompt", "Messages", "Summaries", "Tool outputs"):
            assert part in report
        # the tool definitions are counted too, so the rows add up to the headline
        tools = app.session.context_manager.tool_tokens
        assert tools > 0 and f"| Tool definitions | {format_tokens(tools)} |" in report
        assert "Recent compactions" in report and "none yet" in report
        assert "Work ledger" in report and "Files read: a.txt" in report  # ADR 0050
        budget = app.session.context_manager.max_tokens
        assert f"{budget / 1000:.1f}k" in report
    assert len(llm_server.requests) == 2, "/context asks no model"


async def test_model_switches_the_model_for_the_next_request(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("hi"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/model")
        await pilot.pause()
        # Without a name: the server's own list (GET /v1/models) and how to switch.
        listed = notices(app)[-1]
        assert "- `test-model`" in listed and "Switch with `/model NAME`" in listed
        await submit(pilot, "/model other-model")
        await pilot.pause()
        assert app.header.model == "other-model"
        assert app.settings.llm.model == "other-model"
        await submit(pilot, "hello")
        await wait_idle(pilot)
    assert llm_server.requests[0].model == "other-model"


async def test_clear_starts_a_new_session(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("fresh answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "remember this")
        await wait_idle(pilot)
        await submit(pilot, "/compact")
        await wait_idle(pilot)
        assert app.status.recent_compactions and app.status.summarization.state == "skipped"
        old_session = app.session.session_id
        await submit(pilot, "/clear")
        assert app.session.session_id != old_session
        assert not app.status.recent_compactions, "/context forgets the old session's runs"
        assert app.status.summarization.state == "idle"
        assert not list(app.chat.query(UserMessageBlock))
        assert notices(app) == ["New session started."]
        assert [m.role for m in app.session.agent.conversation.messages] == ["system"]
        await submit(pilot, "new topic")
        await wait_idle(pilot)
        assert [b.answer_text for b in app.chat.query(AssistantBlock)] == ["fresh answer"]
    contents = [m["content"] for m in llm_server.requests[1].messages]
    assert "remember this" not in contents


async def test_sessions_lists_this_workspace(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("ok"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/sessions")
        await pilot.pause()
        assert notices(app)[-1] == "No saved sessions for this workspace yet."
        await submit(pilot, "a saved question")
        await wait_idle(pilot)
        await submit(pilot, "/sessions")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionsScreen), "the picker")
        assert isinstance(app.screen, SessionsScreen)
        [row] = app.screen.rows
        assert row.info.id == app.session.session_id and row.info.title == "a saved question"


async def test_sessions_with_an_id_resumes_that_session_in_the_app(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("second answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "the first session's question")
        await wait_idle(pilot)
        first_id = app.session.session_id
        await submit(pilot, "/clear")
        await submit(pilot, "another question")
        await wait_idle(pilot)
        assert app.session.session_id != first_id
        await submit(pilot, f"/sessions {first_id[-6:]}")
        await pilot.pause()
        assert app.session.session_id == first_id
        users = [b.text for b in app.chat.query(UserMessageBlock)]
        assert users == ["the first session's question"], "its history, not the other one's"
        assert notices(app)[-1] == f"Resumed session `{first_id}`."
        await submit(pilot, "/sessions nope-no-such")
        assert "Cannot resume `nope-no-such`" in notices(app)[-1]


async def test_help_opens_and_closes(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/help")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), "help closed")
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help by F1")


async def test_settings_opens_the_settings_overlay(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from forge.tui.settings.screen import SettingsScreen

    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/settings")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "settings")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), "closed")
        await pilot.press("ctrl+comma")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "by Ctrl+,")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SettingsScreen), "closed")
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "by F2")


async def test_quit_exits(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/quit")
        await wait_until(pilot, lambda: not app.is_running, "the app to exit")
    assert app.return_code == 0


async def test_commands_that_change_the_session_wait_for_the_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    release = install_gate(workspace)
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]))
    llm_server.enqueue(Text("done"))
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hold")
        await wait_until(pilot, lambda: app.busy and app.chat.tool_blocks, "the running call")
        session = app.session.session_id
        for command in ("/clear", "/compact", "/model x"):
            await submit(pilot, command)
            await pilot.pause()
            assert "wait for it, or press Esc" in notices(app)[-1]
        assert app.session.session_id == session
        release.touch()
        await wait_idle(pilot)


async def test_palette_runs_a_slash_command(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p", *"/context")
        await wait_until(pilot, lambda: one_option(app), "the palette to filter")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Recent compactions" in notices(app)[-1], "the report")
        await pilot.press("ctrl+p", *"/model")
        await wait_until(pilot, lambda: one_option(app), "the palette to filter")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.prompt.text == "/model ", "the prompt to fill")


async def test_model_alone_says_plainly_when_the_server_cannot_list_its_models(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    store.load()
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/model")
        await pilot.pause()
        told = notices(app)[-1]
        assert told.startswith("Could not list the server's models: could not reach")
        assert "Switch with `/model NAME`" in told
