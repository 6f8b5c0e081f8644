"""The prompt: Enter sends, Shift+Enter / Ctrl+J insert newlines, Up/Down walk the history,
Tab completes slash commands and the hints follow what is typed."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Button

from forge.tui.widgets.prompt_input import CommandHints, PromptArea, PromptInput


class PromptHost(App[None]):
    def compose(self) -> ComposeResult:
        yield PromptArea()


def sent(seen: list[Message]) -> list[str]:
    """Texts submitted, once each (a bubbling message is seen at every node it reaches)."""
    unique = {id(m): m for m in seen if isinstance(m, PromptInput.Submitted)}
    return [m.text for m in unique.values()]


async def test_enter_sends_and_newline_keys_do_not() -> None:
    seen: list[Message] = []
    app = PromptHost()
    async with app.run_test(size=(100, 20), message_hook=seen.append) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"one", "ctrl+j", *"two", "shift+enter", *"three")
        assert prompt.text == "one\ntwo\nthree"
        assert sent(seen) == []
        await pilot.press("enter")
        assert sent(seen) == ["one\ntwo\nthree"]
        assert prompt.text == ""
        await pilot.press("enter")
        assert sent(seen) == ["one\ntwo\nthree"], "an empty prompt sends nothing"


async def test_up_and_down_walk_the_history_and_keep_the_draft() -> None:
    app = PromptHost()
    async with app.run_test(size=(100, 20)) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"first", "enter", *"second", "enter", *"draft")
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "first"
        await pilot.press("up")
        assert prompt.text == "first", "the oldest entry stays"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "draft"


async def test_up_inside_a_multi_line_draft_moves_the_cursor() -> None:
    app = PromptHost()
    async with app.run_test(size=(100, 20)) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"old", "enter", *"line1", "ctrl+j", *"line2")
        await pilot.press("up")
        assert prompt.text == "line1\nline2"
        assert prompt.cursor_location[0] == 0


async def test_tab_completes_commands_and_hints_follow_the_text() -> None:
    app = PromptHost()
    async with app.run_test(size=(100, 20)) as pilot:
        prompt = app.query_one(PromptInput)
        hints = app.query_one(CommandHints)
        prompt.focus()
        await pilot.press("slash")
        assert hints.has_class("-visible")
        await pilot.press("c")
        assert "/compact" in str(hints.render()) and "/clear" in str(hints.render())
        await pilot.press("o", "tab")
        assert prompt.text == "/co", "ambiguous: /compact and /context share only /co"
        await pilot.press("m", "tab")
        assert prompt.text == "/compact "
        assert not hints.has_class("-visible"), "hints hide once the argument starts"
        prompt.clear()
        await pilot.press(*"hello", "tab")
        assert prompt.text == "hello", "Tab outside a command does not complete"


class PromptBesideAButton(App[None]):
    """The prompt with another focusable widget, as in the real app (the chat, tool calls)."""

    def compose(self) -> ComposeResult:
        yield Button("elsewhere")
        yield PromptArea()


async def test_tab_in_a_partly_typed_command_keeps_the_focus_in_the_prompt() -> None:
    app = PromptBesideAButton()
    async with app.run_test(size=(100, 20)) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"/co", "tab")
        assert app.focused is prompt, "an ambiguous command keeps the focus"
        await pilot.press(*"ntext")
        assert prompt.text == "/context", "what is typed next still lands in the prompt"
        prompt.clear()
        await pilot.press(*"hello", "tab")
        assert isinstance(app.focused, Button), "outside a command Tab moves the focus"
