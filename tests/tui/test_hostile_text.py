"""Hostile text through the real app: control sequences from the model, tools, `!` output,
files, errors and resumed history never reach the terminal, and text that looks like
Textual markup is shown as typed, never parsed (issue 20)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.widgets import Button, OptionList, Static

from forge.agent.events import (
    AssistantMessageDone,
    MessageDelta,
    ReasoningDelta,
    ToolCallStarted,
    ToolOutputDelta,
)
from forge.llm.messages import Message, ToolCall
from forge.text_safety import terminal_safe
from forge.tui.command_table import set_custom_commands
from forge.tui.screens.approval import ApprovalScreen
from forge.tui.screens.help import HelpScreen
from forge.tui.screens.question import QuestionScreen
from forge.tui.settings.confirm import DiscardChangesScreen
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import AssistantBlock, ToolCallBlock
from forge.tui.widgets.file_hints import FileHints
from forge.tui.widgets.prompt_input import CommandHints
from tests.support.openai_server import Call, Fault, OpenAIServer, Text, ToolCalls
from tests.tui.event_delivery import show_event
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (120, 40)
HOSTILE = (
    "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b]2;owned\x1b\\"
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"
    "\x1b[2J\x1b[H\x1b[5A\x1bP+q544e\x1b\\\x07\x9b2J\x9d0;c1\x9c"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def screen_controls(app: App[object]) -> list[str]:
    """Control characters in the text of what the screen shows now (Textual adds its own
    sequences only after this point, from styles)."""
    found: list[str] = []
    for strip in app.screen._compositor.render_strips():
        for segment in strip:
            found.extend(_CONTROL.findall(segment.text))
    return found


async def test_model_text_and_command_output_reach_the_screen_inert(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / "hostile.txt").write_text(f"file says {HOSTILE}\n")
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": "cat hostile.txt"})]),
        Text(f"Here it is: {HOSTILE} done", chunk_size=3),
    )
    store = configure(llm_server, monkeypatch, config={"tools": {"mode": "auto"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "show me")
        await wait_idle(pilot)
        await pilot.pause()
        assert screen_controls(app) == []


HIDDEN_QUOTE = "\x1b['m"
"""A CSI sequence holding a quote: removed from view, it would hide a character a shell obeys."""


async def test_the_approval_dialog_shows_the_command_and_content_that_would_run(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    command = f"echo '{HIDDEN_QUOTE} a; rm -rf ~; b' #\u202e \u2066x\u200b"
    llm_server.enqueue(
        ToolCalls([Call("execute_command", {"command": command})]),
        ToolCalls([Call("write_file", {"path": "run.sh", "content": f"{command}\n"})]),
        Text("done"),
    )
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        for _ in ("command", "write"):
            await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "approval")
            await pilot.pause()
            dialog = app.screen
            shown = "\n".join(str(s.render()) for s in dialog.query("#approval-preview *"))
            assert "echo '␛['m a; rm -rf ~; b'" in shown
            assert "#⟨U+202E⟩ ⟨U+2066⟩x⟨U+200B⟩" in shown
            assert screen_controls(app) == []
            await pilot.press("n", "enter")
            await wait_until(pilot, lambda d=dialog: app.screen is not d, "the dialog closed")
        await wait_idle(pilot)


MARKUP = ("[/b]", "[link=https://evil.example/]x[/link]", "[@click=app.quit]y[/]", "[b]bold")


@pytest.mark.parametrize(
    "typed", ["see @notes[/b]", "@x[link=https://e.example/]", "@y[@click=app.quit]"]
)
async def test_markup_typed_after_an_at_is_shown_as_typed(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path, typed: str
) -> None:
    (workspace / "notes[b].md").write_text("notes\n")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        hints = app.query_one(FileHints)
        app.prompt.focus()
        await pilot.press(*typed)
        await wait_until(
            pilot,
            lambda: hints.has_class("-visible") and "index" not in str(hints.content),
            "hints",
        )
        await pilot.pause()
        query = typed.rsplit("@", 1)[1]
        assert query in str(hints.render())
        assert app.is_running


async def test_a_custom_command_description_is_text_in_hints_help_and_palette(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    description = "see [/b] [@click=app.quit]x[/] \x1b]0;owned\x07"
    commands = workspace / ".forge" / "commands"
    commands.mkdir(parents=True)
    (commands / "evil.md").write_text(f"---\ndescription: {json.dumps(description)}\n---\nhi\n")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    try:
        async with app.run_test(size=SIZE) as pilot:
            app.prompt.focus()
            await pilot.press("/", "e", "v")
            hints = app.query_one(CommandHints)
            await wait_until(pilot, lambda: "evil" in str(hints.render()), "the hint")
            assert "see [/b] [@click=app.quit]x[/] ␛]0;owned␇" in str(hints.render())
            assert screen_controls(app) == []
            app.prompt.clear()
            await pilot.press("ctrl+p")
            await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "palette")
            await pilot.press(*"evil")

            def listed() -> bool:
                options = app.screen.query_one(OptionList)
                return any(
                    "[@click=app.quit]" in str(options.get_option_at_index(i).prompt)
                    for i in range(options.option_count)
                )

            await wait_until(pilot, listed, "the palette to list /evil with its description")
            assert screen_controls(app) == []
            await pilot.press("escape")
            await submit(pilot, "/help")
            await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
            await pilot.pause()
            assert screen_controls(app) == []
            assert app.is_running
    finally:
        set_custom_commands(())


async def test_the_discard_question_shows_server_names_as_written() -> None:
    names = ["MCP server evil[/b]", "MCP server [@click=app.quit]x\x1b[2J"]
    app: App[None] = App()
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(DiscardChangesScreen(names))
        await pilot.pause()
        question = app.screen.query_one("#discard-question", Static)
        assert str(question.render()).endswith(
            "Changed: MCP server evil[/b], MCP server [@click=app.quit]x"
        )
        assert screen_controls(app) == []


MIXED = f"{HOSTILE} [/b] [link=https://evil.example/]x[/link] [@click=app.quit]y[/]"
"""Control sequences and Textual markup together, as a hostile model or server writes them."""


async def test_every_path_of_a_turn_and_its_resume_shows_hostile_text_inert(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    (workspace / f"name{HOSTILE[:8]}[b].txt").write_text(f"content {MIXED}\n")
    plan = [{"step": f"step {MIXED}", "status": "in_progress"}]
    llm_server.enqueue(
        Text(f"answer {MIXED}", reasoning=f"thinking {MIXED}", chunk_size=3),
        ToolCalls([Call("update_plan", {"plan": plan})]),
        ToolCalls([Call("execute_command", {"command": f"echo '{MIXED}'"})]),
        ToolCalls([Call("write_file", {"path": "out.txt", "content": f"{MIXED}\n"})]),
        ToolCalls([Call("ask_question", {"question": f"q {MIXED}", "suggestions": [MIXED]})]),
        Text("after the question"),
        Fault(400, {"error": {"message": f"server says {MIXED}"}}),
    )
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "first")
        await wait_idle(pilot)
        assert screen_controls(app) == []
        await submit(pilot, "second")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "approval")
        await pilot.pause()
        assert screen_controls(app) == []
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), "approval 2")
        await pilot.pause()
        assert screen_controls(app) == []
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, QuestionScreen), "question")
        await pilot.pause()
        assert screen_controls(app) == []
        assert [str(b.label) for b in app.screen.query(Button)] == [terminal_safe(MIXED)]
        await pilot.click("#suggestion-0")
        await wait_idle(pilot)
        await submit(pilot, "third")
        await wait_idle(pilot)
        await pilot.pause()
        assert screen_controls(app) == []
        assert any("server says" in text for text in notices(app))
        # Markup came through as the model wrote it.
        answer = app.chat.query(AssistantBlock).first()
        assert answer.answer_text == f"answer {terminal_safe(MIXED)}"
        assert app.is_running
    resumed = make_app(store, workspace, resume_latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(resumed.chat.query(AssistantBlock)), "history")
        await pilot.pause()
        assert screen_controls(resumed) == []
        assert resumed.is_running


async def test_bang_output_masks_the_configured_key_on_screen_and_for_the_model(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    key = "sk-file-key-9a8b7c6d5e4f"
    store = configure(llm_server, monkeypatch, config={"llm": {"api_key": key}})
    llm_server.enqueue(Text("noted"))
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, f"!cat '{store.path}'")
        await wait_idle(pilot)
        output = app.chat.query_one(ToolCallBlock).output
        assert "api_key: [redacted]" in output and key not in output
        await submit(pilot, "what did I run?")
        await wait_idle(pilot)
    sent = llm_server.requests[-1].text()
    assert "api_key: [redacted]" in sent
    assert all(key not in request.text() for request in llm_server.requests)


async def test_a_hostile_workspace_name_and_model_name_show_inert(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    workspace = tmp_path / "repo\x1b]0;owned\x07\x1b[2J[b]"
    workspace.mkdir()
    monkeypatch.setenv("FORGE_LLM__MODEL", "model\x1b]52;c;eA==\x07[@click=app.quit]")
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert screen_controls(app) == []
        assert app.is_running


class ChatHost(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatView()


async def test_sequences_split_between_streamed_pieces_are_handled_as_whole() -> None:
    app = ChatHost()
    async with app.run_test(size=SIZE) as pilot:
        chat = app.query_one(ChatView)
        for piece in ("think\r", "\ning \x1b[", "2Jdone\r"):
            await show_event(chat, ReasoningDelta(piece))
        for piece in ("a\x1b", "[2Jb\r", "\nc\x1b", "]0;t\x07 end\r"):
            await show_event(chat, MessageDelta(piece))
        await show_event(chat, AssistantMessageDone(Message(role="assistant", content="x")))
        call = ToolCall("call_1", "execute_command", '{"command": "x"}')
        await show_event(chat, ToolCallStarted(call))
        for piece in ("one\r", "\ntwo \x1b[1;3", "1mred\x1b[0m\rthree"):
            await show_event(chat, ToolOutputDelta("call_1", piece))
        await pilot.pause()
        (answer,) = chat.query(AssistantBlock)
        assert answer.reasoning_text == "think\ning done\n"
        assert answer.answer_text == "ab\nc␛]0;t␇ end\n"
        assert chat.query_one(ToolCallBlock).output == "one\ntwo red\nthree"
        assert screen_controls(app) == []
