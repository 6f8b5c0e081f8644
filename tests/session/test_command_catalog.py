"""Forge's command catalogue (`forge.session.command_catalog`, docs/adr/0059): one table the
TUI and `forge acp` render, each command's verb a member of `Session`, and the TUI able to run
every command it offers (`forge acp`'s commands run in `tests/acp/test_acp_prompt.py`)."""

from __future__ import annotations

from forge.acp.commands import BUILTIN_COMMANDS, help_text
from forge.agent.input.custom_commands import CustomCommands
from forge.session.command_catalog import COMMANDS, offered_by
from forge.session.core import Session
from forge.session.history import SessionHistory
from forge.session.reports import SessionReports
from forge.session.servers import SessionServers
from forge.tui.command_table import SLASH_COMMANDS
from forge.tui.commands import SlashCommandRunner


def test_names_are_unique_and_each_verb_is_a_member_of_the_session() -> None:
    names = [command.name for command in COMMANDS]
    assert len(set(names)) == len(names)
    for command in COMMANDS:
        assert command.offered_by, command.name
        assert not command.verb or has_verb(command.verb), command.verb


ROLES = {"history": SessionHistory, "reports": SessionReports, "servers": SessionServers}


def has_verb(verb: str) -> bool:
    """Whether `verb` names a member of the session, or of one of its roles (`reports.cost`)."""
    role, _, name = verb.rpartition(".")
    return hasattr(ROLES[role] if role else Session, name)


def test_the_tui_lists_its_commands_from_the_catalogue_and_runs_each() -> None:
    tui = offered_by("tui")
    assert [(c.name, c.description, c.arguments) for c in SLASH_COMMANDS] == [
        (c.name, c.description, c.arguments) for c in tui
    ]
    for command in tui:
        assert callable(getattr(SlashCommandRunner, f"command_{command.name}", None)), command


def test_an_editor_is_offered_its_commands_from_the_catalogue_and_each_runs() -> None:
    acp = offered_by("acp")
    assert [(c.name, c.description, c.hint) for c in BUILTIN_COMMANDS] == [
        (c.name, c.described_for("acp"), c.hint) for c in acp
    ]
    assert help_text(CustomCommands()).splitlines()[0].startswith("/compact — Summarize")


def test_a_command_both_offer_is_described_once_unless_the_editor_does_less() -> None:
    shared = [c for c in COMMANDS if c.offered_by == {"tui", "acp"}]
    assert {c.name for c in shared} == {
        "compact",
        "context",
        "cost",
        "model",
        "help",
        "undo",
        "sandbox",
    }
    same = [c.name for c in shared if not c.editor_description]
    assert same == ["compact", "model", "undo"]
