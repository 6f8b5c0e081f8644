"""The real app against the loopback LLM server: a task streams, turns queue, Esc and
Ctrl+C interrupt, Ctrl+C twice quits, and a first run without a key explains what to do."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Input, Static

from forge.agent.events import MessageDelta, TurnFinished
from forge.tui.app import ForgeApp
from forge.tui.messages import TurnEnded
from forge.tui.settings import SettingsScreen
from forge.tui.widgets.chat import INTERRUPTED_NOTE
from forge.tui.widgets.chat_blocks import (
    AssistantBlock,
    NoticeBlock,
    ToolCallBlock,
    UserMessageBlock,
)
from tests.support.openai_server import Call, Fault, OpenAIServer, Text, ToolCalls
from tests.tui.test_app_helpers import (
    GATE_COMMAND,
    GATE_CONFIG,
    configure,
    events_of,
    install_gate,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)


def footer_actions(app: ForgeApp) -> list[str]:
    """The actions the footer shows keys for right now."""
    return [str(getattr(key, "action", "")) for key in app.query("Footer FooterKey")]


def running_output(app: ForgeApp) -> str:
    """Output shown so far by the tool call blocks in the chat."""
    return "".join(block.output for block in app.chat.query(ToolCallBlock))


async def test_a_task_streams_its_answer_into_the_chat(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    answer = "The tests live in **tests/** and run with `pytest`."
    llm_server.enqueue(Text(answer, chunk_size=5))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "where are the tests?")
        await wait_until(pilot, lambda: any(isinstance(m, TurnEnded) for m in seen), "TurnEnded")
        await wait_idle(pilot)
        deltas = events_of(seen, MessageDelta)
        # Streamed pieces reach the UI joined into ~30 ms batches (test_delta_batching.py).
        assert "".join(delta.text for delta in deltas) == answer
        assert events_of(seen, TurnFinished)[-1].reason == "answered"
        ended = [m for m in seen if isinstance(m, TurnEnded)]
        assert [m.reason for m in ended] == ["completed"]
        assert [b.text for b in app.chat.query(UserMessageBlock)] == ["where are the tests?"]
        answers = list(app.chat.query(AssistantBlock))
        assert [block.answer_text for block in answers] == [answer]
    assert "where are the tests?" in llm_server.requests[0].text()
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-test-key"


async def test_a_message_sent_during_a_turn_is_queued_then_sent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    release = install_gate(workspace)
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]),
        Text("first done"),
        Text("second done"),
    )
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first task")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        await submit(pilot, "second task")
        queued = [b for b in app.chat.query(UserMessageBlock) if b.has_class("-queued")]
        assert [b.text for b in queued] == ["second task"]
        assert str(queued[0].render()).startswith("queued"), "a word says it waits"
        assert [text for text, _ in app.queued] == ["second task"]
        assert len(llm_server.requests) == 1, "nothing is sent while the turn runs"
        release.touch()
        await wait_until(pilot, lambda: len(llm_server.requests) == 3, "the queued request")
        await wait_idle(pilot)
        assert not any(b.has_class("-queued") for b in app.chat.query(UserMessageBlock))
        answers = [b.answer_text for b in app.chat.query(AssistantBlock)]
        assert answers == ["first done", "second done"]
        # The running turn's answer is drawn above the queued message, not below it.
        order = [
            f"user:{b.text}" if isinstance(b, UserMessageBlock) else f"answer:{b.answer_text}"
            for b in app.chat.children
            if isinstance(b, UserMessageBlock | AssistantBlock)
        ]
        assert order == [
            "user:first task",
            "answer:first done",
            "user:second task",
            "answer:second done",
        ]
    assert llm_server.requests[2].messages[-1] == {"role": "user", "content": "second task"}


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_esc_or_ctrl_c_interrupts_the_running_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, key: str
) -> None:
    install_gate(workspace)
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]))
    llm_server.enqueue(Text("after"))
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        assert "interrupt" not in footer_actions(app), "Esc is not offered while idle"
        await submit(pilot, "wait for the gate")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        await wait_until(
            pilot, lambda: "interrupt" in footer_actions(app), "the footer to offer Esc"
        )
        await pilot.press(key)
        await wait_idle(pilot, "the interrupted turn to end")
        assert [m.reason for m in seen if isinstance(m, TurnEnded)] == ["cancelled"]
        assert INTERRUPTED_NOTE in notices(app)
        assert app.chat.query_one(ToolCallBlock).status_text == "interrupted"
        assert app.is_running, "one Ctrl+C does not quit"
        conversation = app.session.agent.conversation
        assert conversation.is_valid()
        assert conversation.messages[-1].role == "tool", "the call got a cancelled result"
        await submit(pilot, "next")
        await wait_idle(pilot)
        assert [b.answer_text for b in app.chat.query(AssistantBlock)][-1] == "after"
    assert len(llm_server.requests) == 2


async def test_interrupt_returns_queued_messages_to_the_prompt(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    install_gate(workspace)
    llm_server.enqueue(ToolCalls([Call("execute_command", {"command": GATE_COMMAND})]))
    app = make_app(configure(llm_server, monkeypatch, config=GATE_CONFIG), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "long task")
        await wait_until(pilot, lambda: "waiting" in running_output(app), "the gate to block")
        await submit(pilot, "follow-up")
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.queued == []
        assert app.prompt.text == "follow-up"
        assert notices(app)[-1] == (
            f"{INTERRUPTED_NOTE} Your queued message is back in the prompt, not sent."
        )
        assert [b.text for b in app.chat.query(UserMessageBlock)] == ["long task"]
    assert len(llm_server.requests) == 1


async def test_ctrl_c_twice_quits(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, "the app to exit")
    assert app.return_code == 0


async def test_first_run_without_a_key_explains_how_to_set_one(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch, api_key="")
    monkeypatch.delenv("OPENAI_BASE_URL")  # the default endpoint, which needs a key
    store.load()
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        welcome = notices(app)
        assert any("OPENAI_API_KEY" in text and "/settings" in text for text in welcome)
        await submit(pilot, "hello")
        assert not app.busy
        assert sum("OPENAI_API_KEY" in text for text in notices(app)) == 2
        not_sent = app.chat.query(NoticeBlock).last()
        assert not_sent.kind == "error" and not_sent.text.startswith("Not sent: no API key")
        assert "Welcome" not in not_sent.text, "a short reminder, not the whole welcome again"
        assert "/settings" in not_sent.text and "F2" in not_sent.text
    assert llm_server.requests == []


async def test_continue_shows_the_resumed_conversation(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("Answer one."))
    store = configure(llm_server, monkeypatch)
    first = make_app(store, workspace)
    async with first.run_test(size=SIZE) as pilot:
        await submit(pilot, "question one")
        await wait_idle(pilot)
        session_id = first.session.session_id
    again = make_app(store, workspace, resume_latest=True)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.session.session_id == session_id
        assert [b.text for b in again.chat.query(UserMessageBlock)] == ["question one"]
        assert [b.answer_text for b in again.chat.query(AssistantBlock)] == ["Answer one."]
        assert any(session_id in text for text in notices(again))


async def test_a_provider_error_is_reported_and_the_app_stays_usable(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Fault(401, {"error": {"message": "Incorrect API key provided"}}))
    llm_server.enqueue(Text("Working again."))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        errors = [b.text for b in app.chat.query(NoticeBlock) if b.kind == "error"]
        assert len(errors) == 1 and "API key" in errors[0]
        assert "sk-test-key" not in errors[0]
        await submit(pilot, "again")
        await wait_idle(pilot)
        assert [b.answer_text for b in app.chat.query(AssistantBlock)] == ["Working again."]


def test_resume_of_an_unknown_session_fails_before_the_ui_starts(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from forge.cli import main

    code = main(["--workspace", str(workspace), "--resume", "20250101-000000-abcdef"])
    assert code == 2
    assert "no session with id 20250101-000000-abcdef" in capsys.readouterr().err


def test_a_missing_workspace_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from forge.cli import main

    assert main(["--workspace", str(tmp_path / "nowhere")]) == 2
    assert "is not a directory" in capsys.readouterr().err


async def test_a_broken_config_file_is_reported_in_the_chat_and_left_untouched(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch)
    store.path.parent.mkdir(parents=True, exist_ok=True)
    broken = b"context:\n  warning_threshold: 7\n"
    store.path.write_bytes(broken)
    store.load()
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        reported = [text for text in notices(app) if "Config value not applied" in text]
        assert reported and "config.yaml:2" in reported[0]
        assert "context.warning_threshold" in reported[0]
        assert "Fix it in the file or in /settings" in reported[0], "it agrees with /settings"
        await submit(pilot, "still there?")
        await wait_idle(pilot)
        # /settings shows the values in use and says the bad one runs on its default (ADR 0022).
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.screen, SettingsScreen), "/settings")
        screen = app.screen
        assert screen.query_one("#field-llm-model", Input).value == "gpt-4o-mini"
        banner = str(screen.query_one("#settings-file-error", Static).render())
        assert "its default runs instead" in banner and "saving writes the values shown" in banner
    assert llm_server.requests and llm_server.requests[0].model == "gpt-4o-mini"
    assert store.path.read_bytes() == broken


async def test_keys_typed_while_a_chat_block_has_focus_go_to_the_prompt(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    from textual.widgets._collapsible import CollapsibleTitle

    (workspace / "a.txt").write_text("alpha\n")
    llm_server.enqueue(ToolCalls([Call("read_file", {"path": "a.txt"})]), Text("read it"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read a.txt")
        await wait_idle(pilot)
        title = app.chat.query_one(ToolCallBlock).query_one(CollapsibleTitle)
        title.focus()
        await pilot.pause()
        assert app.focused is title
        handled = app.inputs_handled
        await pilot.press(*"/help")
        assert app.focused is app.prompt
        assert app.prompt.text == "/help"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.inputs_handled > handled, "the command")
        assert app.prompt.text == ""


async def test_what_the_user_sends_brings_the_chat_back_to_the_newest_output(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # A scroll up (or Shift+Tab focusing a block higher up) releases the chat's anchor; a
    # task or command sent afterwards must show its output, not leave the chat where it was.
    llm_server.enqueue(Text("the answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        for number in range(30):
            await app.chat.add_notice(f"earlier line {number}")
        await pilot.pause()
        chat = app.chat
        assert chat.max_scroll_y > 0, "the chat overflows"
        chat.release_anchor()  # what a scroll up by the user does
        chat.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert chat.scroll_y == 0
        await submit(pilot, "/cost")
        for _ in range(3):
            await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y > 0, "the command's output is in view"
        chat.release_anchor()
        chat.scroll_home(animate=False, immediate=True)
        await submit(pilot, "a task")
        await wait_idle(pilot)
        for _ in range(3):
            await pilot.pause()
        assert chat.query(AssistantBlock).last().answer_text == "the answer"
        assert chat.scroll_y == chat.max_scroll_y > 0, "the task and its answer are in view"


async def test_keys_typed_before_the_prompt_had_focus_are_typed_and_sent(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    # Keys typed while Forge starts wait in the terminal; the first ones can reach the app
    # before the prompt is focused (Textual then forwards them to the screen) and bubble up
    # to the app once it is. They were dropped; an Enter typed then (a newline, Ctrl+J, in
    # the terminal's line mode) sends the task.
    from textual import events

    llm_server.enqueue(Text("hello back"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        # As at start-up: the keys arrive with nothing focused, the prompt's focus after them.
        app.screen.set_focus(None)
        for character in "say hi":
            app.post_message(events.Key(character, character))
        app.prompt.focus()
        await pilot.pause()
        assert app.prompt.text == "say hi"
        handled = app.inputs_handled
        app.screen.set_focus(None)
        app.post_message(events.Key("ctrl+j", None))
        app.prompt.focus()
        await wait_until(pilot, lambda: app.inputs_handled > handled, "the task")
        await wait_idle(pilot)
        assert app.prompt.text == ""
    assert [r.messages[-1]["content"] for r in llm_server.requests] == ["say hi"]


async def test_ctrl_c_with_a_draft_clears_it_instead_of_arming_quit(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        app.prompt.focus()
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.prompt.text == ""
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running, "clearing the draft did not count as the first Ctrl+C"


async def test_the_no_key_welcome_goes_away_once_a_key_is_set(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://api.example.invalid/v1")
    from forge.config.store import ConfigStore

    store = ConfigStore()
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert any(n.kind == "welcome" for n in app.chat.query(NoticeBlock))
        from pydantic import SecretStr

        llm = app.settings.llm.model_copy(update={"api_key": SecretStr("sk-new")})
        await app.show_settings(app.settings.model_copy(update={"llm": llm}))
        await pilot.pause()
        assert not any(n.kind == "welcome" for n in app.chat.query(NoticeBlock))
        assert any("Forge is ready" in text for text in notices(app))


async def test_text_still_batched_when_esc_interrupts_is_shown_as_the_answer_kept(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    import functools

    import forge.tui.turn_flows as turn_flows_module
    from forge.agent.turn.interruption import INTERRUPTED_NOTE
    from forge.tui.delta_batching import batch_deltas

    # A window that never closes on its own: every delta is still batched when Esc comes.
    monkeypatch.setattr(
        turn_flows_module, "batch_deltas", functools.partial(batch_deltas, interval=600)
    )
    llm_server.enqueue(Text("first words then a long wait " * 40, chunk_size=10, chunk_delay=0.2))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "talk")
        await wait_until(pilot, lambda: len(llm_server.requests) == 1, "the request")
        await pilot.pause(0.5)  # a few chunks arrive, none shown yet
        await pilot.press("escape")
        await wait_idle(pilot, "the interrupted turn to end")
        kept = app.session.agent.conversation.messages[-1]
        assert kept.role == "assistant"
        kept_text = kept.content.replace(INTERRUPTED_NOTE, "").strip()
        assert kept_text.startswith("first words")
        shown = [b.answer_text for b in app.chat.query(AssistantBlock)]
        assert shown and shown[-1].strip() == kept_text
