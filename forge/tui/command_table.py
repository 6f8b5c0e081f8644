"""The slash-command table: every command, parsing typed input, and completion.

Forge's own commands come from the session's catalogue (`forge.session.command_catalog`,
which `forge acp` reads too); the custom commands and the skills are added here.

Read by the prompt (completion and hints), the help screen, the command palette and the
handlers in `forge.tui.commands`; it imports none of them, so the arrows point one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge.session.command_catalog import offered_by


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One slash command: its name (without "/"), argument hint and one-line description."""

    name: str
    description: str
    arguments: str = ""
    """How the argument is written in help, e.g. "NAME" or "[instructions]"; empty if none."""
    argument_required: bool = False

    @property
    def usage(self) -> str:
        """The command as typed, e.g. "/model NAME"."""
        return f"/{self.name} {self.arguments}".rstrip()


SLASH_COMMANDS: tuple[SlashCommand, ...] = tuple(
    SlashCommand(
        command.name,
        command.described_for("tui"),
        command.arguments,
        argument_required=command.argument_required,
    )
    for command in offered_by("tui")
)
"""Every slash command, in the order help lists them."""

_BY_NAME = {command.name: command for command in SLASH_COMMANDS}

_custom: tuple[SlashCommand, ...] = ()
"""The user's and project's own commands (`forge.agent.input.custom_commands`), after the
built-ins."""


def set_custom_commands(commands: tuple[SlashCommand, ...]) -> None:
    """Use `commands` as the custom commands (a name of a built-in one is left out)."""
    global _custom
    _custom = tuple(command for command in commands if command.name not in _BY_NAME)


_skills: tuple[SlashCommand, ...] = ()
"""The skills runnable as `/name` (`forge.agent.skills.commands`), after the custom commands."""


def set_skill_commands(commands: tuple[SlashCommand, ...]) -> None:
    """Use `commands` as the skills' commands (a built-in's or custom command's name is left
    out: they win, docs/adr/0046)."""
    global _skills
    taken = set(_BY_NAME) | {command.name for command in _custom}
    _skills = tuple(command for command in commands if command.name not in taken)


def all_commands() -> tuple[SlashCommand, ...]:
    """The built-in commands, then the custom ones, then the skills: what help, completion
    and the palette list."""
    return SLASH_COMMANDS + _custom + _skills


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """Typed input that starts with "/": the name, its argument text, and the known command
    (None when the name is not a command)."""

    name: str
    argument: str
    command: SlashCommand | None


def parse_slash_command(text: str) -> ParsedCommand | None:
    """Parse `text` as a slash command; None when it is ordinary chat input.

    A leading "//" escapes a message that really starts with "/", so it is not a command.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//") or stripped == "/":
        return None
    head, _, argument = stripped[1:].partition(" ")
    name = head.strip().lower()
    command = _BY_NAME.get(name) or next((c for c in _custom + _skills if c.name == name), None)
    return ParsedCommand(name=name, argument=argument.strip(), command=command)


def complete_slash_command(text: str) -> list[SlashCommand]:
    """Commands whose name starts with what is typed after "/" (all of them for "/").

    Empty once the text has a space (the user is typing the argument) or is not a command.
    """
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    prefix = text[1:].lower()
    return [command for command in all_commands() if command.name.startswith(prefix)]


def unknown_command_message(name: str) -> str:
    """The clear message shown for a command Forge does not have."""
    suggestions = complete_slash_command(f"/{name[:1]}") if name else []
    hint = f" Did you mean {', '.join(c.usage for c in suggestions)}?" if suggestions else ""
    return f"Unknown command /{name}.{hint} Type /help for the list."
