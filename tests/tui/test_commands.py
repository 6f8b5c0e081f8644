"""Slash-command parsing, completion, and the command-palette provider in a running app."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.widgets import Label, OptionList

from forge.tui.command_table import (
    SLASH_COMMANDS,
    SlashCommand,
    complete_slash_command,
    parse_slash_command,
    unknown_command_message,
)
from forge.tui.commands import SlashCommandProvider
from tests.tui.test_app_helpers import wait_until


def test_parse_splits_name_and_argument() -> None:
    parsed = parse_slash_command("/compact  keep the test names ")
    assert parsed is not None
    assert parsed.name == "compact"
    assert parsed.argument == "keep the test names"
    assert parsed.command is not None and parsed.command.name == "compact"


def test_parse_is_case_insensitive_for_the_name_only() -> None:
    parsed = parse_slash_command("/MODEL gpt-4o-Mini")
    assert parsed is not None
    assert (parsed.name, parsed.argument) == ("model", "gpt-4o-Mini")


def test_ordinary_text_and_escaped_slash_are_not_commands() -> None:
    assert parse_slash_command("fix the bug") is None
    assert parse_slash_command("//etc/hosts is odd") is None
    assert parse_slash_command("/") is None


def test_unknown_command_is_parsed_without_a_command() -> None:
    parsed = parse_slash_command("/frobnicate now")
    assert parsed is not None
    assert parsed.command is None
    message = unknown_command_message(parsed.name)
    assert "Unknown command /frobnicate" in message
    assert "/help" in message


def test_completion_matches_prefixes_and_stops_at_the_argument() -> None:
    assert [c.name for c in complete_slash_command("/c")] == [
        "compact",
        "context",
        "cost",
        "clear",
        "copy",
    ]
    assert [c.name for c in complete_slash_command("/")] == [c.name for c in SLASH_COMMANDS]
    assert complete_slash_command("/model gpt") == []
    assert complete_slash_command("hello") == []


def test_every_required_command_exists() -> None:
    names = {command.name for command in SLASH_COMMANDS}
    assert names == {
        "settings",
        "compact",
        "context",
        "cost",
        "clear",
        "model",
        "help",
        "sessions",
        "mcp",
        "quit",
        "undo",
        "rewind",
        "trust",
        "hooks",
        "skills",
        "copy",
        "sandbox",
        "rename",
        "fork",
        "export",
        "tasks",
    }


class PaletteHost(App[None]):
    """A small app using the real provider; records what the palette invoked."""

    COMMANDS = {SlashCommandProvider}

    def __init__(self) -> None:
        super().__init__()
        self.invoked: list[str] = []

    def compose(self) -> ComposeResult:
        yield Label("host")

    def invoke_slash_command(self, command: SlashCommand) -> None:
        self.invoked.append(command.name)


async def test_palette_lists_every_command_and_runs_the_chosen_one() -> None:
    app = PaletteHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        options = app.screen.query_one(OptionList)
        await wait_until(pilot, lambda: options.option_count == len(SLASH_COMMANDS), "commands")
        listed = {str(options.get_option_at_index(i).prompt) for i in range(options.option_count)}
        assert {c.usage for c in SLASH_COMMANDS} <= {p.split("\n")[0] for p in listed}
        await pilot.press(*"sessions")
        await wait_until(pilot, lambda: options.option_count == 1, "the filtered list")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.invoked, "the command to run")
    assert app.invoked == ["sessions"]


async def test_palette_search_keeps_the_argument_hint() -> None:
    app = PaletteHost()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        options = app.screen.query_one(OptionList)
        await pilot.press(*"compact")
        await wait_until(pilot, lambda: options.option_count == 1, "one match")
        shown = str(options.get_option_at_index(0).prompt)
        assert "/compact [instructions]" in shown


def test_the_command_table_imports_none_of_the_modules_that_read_it() -> None:
    """The table is read by the app, the handlers, the help screen and the prompt; the
    arrows point one way, so it imports none of them (not even for type checking)."""
    import ast
    from pathlib import Path

    import forge.tui.command_table as table

    tree = ast.parse(Path(table.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    assert not {name for name in imported if name.startswith("forge.tui")}
    commands_source = Path(table.__file__).with_name("commands.py").read_text(encoding="utf-8")
    assert "forge.tui.app" not in commands_source, "the handlers see the app through a Protocol"
