"""Slash commands: the list, parsing, completion, and the command-palette provider.

Every slash command is also a command-palette entry, so Ctrl+P lists them all. A palette entry
for a command that needs an argument (`/model NAME`) fills the prompt instead of running.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

if TYPE_CHECKING:
    from forge.tui.app import ForgeApp


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
    SlashCommand("clear", "Start a new session with an empty conversation"),
    SlashCommand("model", "Switch the model for this session", "NAME", argument_required=True),
    SlashCommand("help", "Show commands and key bindings"),
    SlashCommand("sessions", "List saved sessions for this workspace"),
    SlashCommand("quit", "Exit Forge"),
)
"""Every slash command, in the order help lists them."""

_BY_NAME = {command.name: command for command in SLASH_COMMANDS}


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
    return ParsedCommand(name=name, argument=argument.strip(), command=_BY_NAME.get(name))


def complete_slash_command(text: str) -> list[SlashCommand]:
    """Commands whose name starts with what is typed after "/" (all of them for "/").

    Empty once the text has a space (the user is typing the argument) or is not a command.
    """
    if not text.startswith("/") or " " in text or "\n" in text:
        return []
    prefix = text[1:].lower()
    return [command for command in SLASH_COMMANDS if command.name.startswith(prefix)]


def unknown_command_message(name: str) -> str:
    """The clear message shown for a command Forge does not have."""
    suggestions = complete_slash_command(f"/{name[:1]}") if name else []
    hint = f" Did you mean {', '.join(c.usage for c in suggestions)}?" if suggestions else ""
    return f"Unknown command /{name}.{hint} Type /help for the list."


class SlashCommandHost(Protocol):
    """What the palette needs of the app: run a command, or put it in the prompt to finish."""

    def invoke_slash_command(self, command: SlashCommand) -> None:
        """Run `command` (or, when it needs an argument, start typing it in the prompt)."""
        ...


class SlashCommandProvider(Provider):
    """Lists every slash command in Textual's command palette (Ctrl+P)."""

    def _host(self) -> SlashCommandHost:
        app: object = self.app
        return app  # type: ignore[return-value]  # ForgeApp implements SlashCommandHost

    async def discover(self) -> Hits:
        """All commands, shown before anything is typed."""
        host = self._host()
        for command in SLASH_COMMANDS:
            yield DiscoveryHit(
                Content(command.usage),  # Content, not markup: "[instructions]" is literal
                partial(host.invoke_slash_command, command),
                text=command.usage,
                help=command.description,
            )

    async def search(self, query: str) -> Hits:
        """Commands matching `query` (with or without the leading "/")."""
        matcher = self.matcher(query)
        host = self._host()
        for command in SLASH_COMMANDS:
            score = matcher.match(command.usage)
            if score > 0:
                # Only the name is highlighted: highlight() reads markup, and "[instructions]"
                # would vanish as a tag.
                arguments = Content(f" {command.arguments}" if command.arguments else "")
                yield Hit(
                    score,
                    matcher.highlight(f"/{command.name}") + arguments,
                    partial(host.invoke_slash_command, command),
                    help=command.description,
                )


class SlashCommandRunner:
    """Runs slash commands against the app: each `command_*` method is one command."""

    BUSY_MESSAGE = "A turn is running: wait for it, or press Esc to interrupt it first."

    def __init__(self, app: ForgeApp) -> None:
        self.app = app

    async def run_text(self, text: str) -> bool:
        """Run `text` if it is a slash command; False when it is ordinary chat input."""
        parsed = parse_slash_command(text)
        if parsed is None:
            return False
        await self.run(parsed)
        return True

    async def run(self, parsed: ParsedCommand) -> None:
        """Run one parsed command; an unknown one gets a clear message."""
        handler = getattr(self, f"command_{parsed.name}", None)
        if handler is None:
            await self.app.chat.add_notice(unknown_command_message(parsed.name), kind="error")
            return
        await handler(parsed.argument)

    async def _refuse_if_busy(self) -> bool:
        if self.app.busy:
            await self.app.chat.add_notice(self.BUSY_MESSAGE, kind="error")
            return True
        return False

    async def command_settings(self, argument: str) -> None:
        """Open the settings overlay; saving hot-reloads through the reload controller."""
        from forge.tui.settings.screen import SettingsScreen

        controller = self.app.reload_controller
        screen = SettingsScreen(self.app.config_store, running=self.app.settings)
        self.app.push_screen(screen, callback=controller.apply_saved)

    async def command_compact(self, argument: str) -> None:
        """Summarize now, guided by optional instructions."""
        if await self._refuse_if_busy():
            return
        note = f" with instructions: {argument}" if argument else ""
        notice = await self.app.chat.add_notice(f"Compacting the conversation{note}…")
        self.app.start_compaction(argument, notice)

    async def command_context(self, argument: str) -> None:
        """Show the context breakdown and recent compactions."""
        from forge.tui.widgets.context_report import context_breakdown, context_report_markdown

        runtime = self.app.runtime
        conversation = runtime.agent.conversation
        manager = runtime.context_manager
        breakdown = context_breakdown(conversation.messages, runtime.counter)
        report = context_report_markdown(
            breakdown,
            current_tokens=manager.current_tokens(conversation),
            max_tokens=manager.max_tokens,
            recent_compactions=self.app.status.recent_compactions,
        )
        await self.app.chat.add_notice(report)

    async def command_clear(self, argument: str) -> None:
        """Start a new session: a fresh runtime and an empty chat."""
        if await self._refuse_if_busy():
            return
        await self.app.new_session()
        await self.app.chat.add_notice("New session started.")

    async def command_model(self, argument: str) -> None:
        """Switch the model for this session (the config file is not changed)."""
        current = self.app.settings.llm.model
        if not argument:
            await self.app.chat.add_notice(
                f"Usage: `/model NAME` (current model: `{current}`)", kind="error"
            )
            return
        if await self._refuse_if_busy():
            return
        llm = self.app.settings.llm.model_copy(update={"model": argument})
        settings = self.app.settings.model_copy(update={"llm": llm})
        try:
            self.app.runtime.apply_settings(settings)
        except Exception as error:  # e.g. a provider that cannot be built
            await self.app.chat.add_notice(f"Could not switch the model: {error}", kind="error")
            return
        await self.app.show_settings(settings)
        await self.app.chat.add_notice(f"Model for this session: `{argument}` (was `{current}`).")

    async def command_help(self, argument: str) -> None:
        """Show the help screen."""
        from forge.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    async def command_sessions(self, argument: str) -> None:
        """List this workspace's saved sessions."""
        from forge.agent.sessions import SessionStore
        from forge.tui.widgets.context_report import sessions_markdown

        sessions = SessionStore().list_sessions(self.app.workspace)
        await self.app.chat.add_notice(sessions_markdown(sessions, self.app.runtime.session_id))

    async def command_quit(self, argument: str) -> None:
        """Exit Forge."""
        self.app.exit(0)
