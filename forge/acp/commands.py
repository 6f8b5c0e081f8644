"""The slash commands `forge acp` offers an editor (`available_commands_update`) and what a
prompt starting with "/" does: Forge's own commands that make sense without a terminal, and
the user's and project's custom commands (docs/adr/0026), expanded into a turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from forge.config.settings import Settings
from forge.session.command_catalog import offered_by
from forge.session.custom_commands import CustomCommands, read_custom_commands


@dataclass(frozen=True, slots=True)
class BuiltinCommand:
    """One of Forge's commands as an editor runs it."""

    name: str
    description: str
    hint: str = ""
    """What the argument is, for the editor's input hint ("" for none)."""


BUILTIN_COMMANDS: tuple[BuiltinCommand, ...] = tuple(
    BuiltinCommand(command.name, command.described_for("acp"), command.hint)
    for command in offered_by("acp")
)
"""Forge's commands an editor offers (`forge.session.command_catalog`)."""
BUILTIN_NAMES = frozenset(command.name for command in BUILTIN_COMMANDS)


@dataclass(frozen=True, slots=True)
class SlashInput:
    """A prompt that starts with "/": the command's name and the rest."""

    name: str
    argument: str


def parse_slash(text: str) -> SlashInput | None:
    """`text` as "/name argument", or None for ordinary input ("//" escapes a leading "/")."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//") or stripped == "/":
        return None
    head, _, argument = stripped[1:].partition(" ")
    return SlashInput(head.strip().lower(), argument.strip())


def load_commands(workspace: Path, settings: Settings) -> CustomCommands:
    """The custom commands of the user and the project (a built-in name wins)."""
    return read_custom_commands(workspace, settings, reserved=BUILTIN_NAMES)


def advertised(
    custom: CustomCommands, skills: Sequence[tuple[str, str]] = ()
) -> list[AvailableCommand]:
    """Every command the editor may offer: Forge's, then the custom ones, then the skills the
    user may run as `/name args` (docs/adr/0046)."""
    commands = [
        AvailableCommand(
            name=command.name, description=command.description, input=_input(command.hint)
        )
        for command in BUILTIN_COMMANDS
    ]
    for name, command in sorted(custom.commands.items()):
        hint = command.argument_hint or ("arguments" if command.takes_arguments else "")
        commands.append(
            AvailableCommand(name=name, description=command.summary, input=_input(hint))
        )
    for name, description in skills:
        commands.append(
            AvailableCommand(name=name, description=description, input=_input("arguments"))
        )
    return commands


def help_text(custom: CustomCommands) -> str:
    """What /help answers: one line per command."""
    lines = [f"/{command.name} — {command.description}" for command in BUILTIN_COMMANDS]
    lines += [f"/{name} — {command.summary}" for name, command in sorted(custom.commands.items())]
    return "\n".join(lines)


def _input(hint: str) -> AvailableCommandInput | None:
    if not hint:
        return None
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
