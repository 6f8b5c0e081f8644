"""The slash-command table: every command, parsing typed input, and completion.

Read by the prompt (completion and hints), the help screen, the command palette and the
handlers in `forge.tui.commands`; it imports none of them, so the arrows point one way.
"""

from __future__ import annotations

from dataclasses import dataclass


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


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("settings", "Settings: models, API key, context, tools (F2)"),
    SlashCommand("compact", "Summarize the conversation now, optionally guided", "[instructions]"),
    SlashCommand("context", "Show what fills the context window and recent compactions"),
    SlashCommand("cost", "Show the session's cost per model and what compaction saved"),
    SlashCommand("clear", "Start a new session with an empty conversation"),
    SlashCommand("model", "Switch the model for this session", "NAME", argument_required=True),
    SlashCommand("copy", "Copy the last answer, or its N-th code block", "[N]"),
    SlashCommand("help", "Show commands and key bindings"),
    SlashCommand("undo", "Restore the files the last turn changed"),
    SlashCommand("rewind", "Go back to before a turn: files, conversation, or both"),
    SlashCommand("sessions", "Pick one of this workspace's sessions to resume", "[ID]"),
    SlashCommand(
        "rename", "Name this session (lists and the header show it)", "NAME", argument_required=True
    ),
    SlashCommand(
        "fork", "Continue in a new session holding the conversation before a turn", "[TURN]"
    ),
    SlashCommand("export", "Write this session as Markdown, HTML or JSON", "[md|html|json] [PATH]"),
    SlashCommand("mcp", "MCP servers: status and tools"),
    SlashCommand("trust", "Workspace trust: what the workspace would run; change it", "[revoke]"),
    SlashCommand("hooks", "Hooks: each one's event, matcher, command, source and trust"),
    SlashCommand("sandbox", "Sandbox: what confines the model's commands, and why not"),
    SlashCommand("tasks", "Background commands: state, live output; stop one"),
    SlashCommand("skills", "Skills: list them; enable or disable one", "[list|enable|disable]"),
    SlashCommand("quit", "Exit Forge"),
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
