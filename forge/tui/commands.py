"""Slash commands: the handlers and the command-palette provider (the table of commands,
parsing and completion are in `forge.tui.command_table`).

Every slash command is also a command-palette entry, so Ctrl+P lists them all. A palette entry
for a command that needs an argument (`/model NAME`) fills the prompt instead of running.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.markup import escape

from forge.session.custom_commands import CustomCommand, CustomCommands, read_custom_commands
from forge.text_safety import terminal_safe
from forge.tui.checkpoint_commands import CheckpointCommands
from forge.tui.command_table import (
    SLASH_COMMANDS,
    ParsedCommand,
    SlashCommand,
    all_commands,
    parse_slash_command,
    set_custom_commands,
    unknown_command_message,
)
from forge.tui.session_commands import SessionCommands
from forge.tui.skill_commands import SkillSlashCommands

if TYPE_CHECKING:
    from forge.tui.command_host import CommandHost


class SlashCommandHost(Protocol):
    """What the palette needs of the app: run a command, or put it in the prompt to finish."""

    def invoke_slash_command(self, command: SlashCommand) -> None:
        """Run `command` (or, when it needs an argument, start typing it in the prompt)."""
        ...


class SlashCommandProvider(Provider):
    """Lists every slash command in Textual's command palette (Ctrl+P)."""

    @staticmethod
    def _help(command: SlashCommand) -> str:
        # The palette reads help as markup; a custom command's description is a file's text.
        return escape(terminal_safe(command.description))

    def _host(self) -> SlashCommandHost:
        app: object = self.app
        return app  # type: ignore[return-value]  # ForgeApp implements SlashCommandHost

    async def discover(self) -> Hits:
        """All commands, shown before anything is typed."""
        host = self._host()
        for command in all_commands():
            yield DiscoveryHit(
                Content(command.usage),  # Content, not markup: "[instructions]" is literal
                partial(host.invoke_slash_command, command),
                text=command.usage,
                help=self._help(command),
            )

    async def search(self, query: str) -> Hits:
        """Commands matching `query` (with or without the leading "/")."""
        matcher = self.matcher(query)
        host = self._host()
        for command in all_commands():
            score = matcher.match(command.usage)
            if score > 0:
                # Only the name is highlighted: highlight() reads markup, and "[instructions]"
                # would vanish as a tag.
                arguments = Content(f" {command.arguments}" if command.arguments else "")
                yield Hit(
                    score,
                    matcher.highlight(f"/{command.name}") + arguments,
                    partial(host.invoke_slash_command, command),
                    help=self._help(command),
                )


class SlashCommandRunner(CheckpointCommands, SkillSlashCommands, SessionCommands):
    """Runs slash commands against the app: each `command_*` method is one command
    (/undo and /rewind live in `forge.tui.checkpoint_commands`, /skills and running a skill
    in `forge.tui.skill_commands`, /rename and /fork in `forge.tui.session_commands`)."""

    BUSY_MESSAGE = "A turn is running: wait for it, or press Esc to interrupt it first."

    def __init__(self, app: CommandHost) -> None:
        self.app = app
        self.custom = CustomCommands()
        """The project's and user's own commands (docs/adr/0026-custom-slash-commands.md)."""

    async def load_custom_commands(self) -> None:
        """(Re)read the custom command files of the workspace and the user; a file that cannot
        be used, or names a built-in command, is told in the chat, naming the file."""
        self.custom = read_custom_commands(
            self.app.workspace,
            self.app.settings,
            reserved=[command.name for command in SLASH_COMMANDS],
        )
        set_custom_commands(tuple(_as_slash_command(c) for c in self.custom.commands.values()))
        if self.custom.problems:
            lines = "\n".join(f"- {problem}" for problem in self.custom.problems)
            await self.app.chat.add_notice(
                f"Some custom commands were not loaded:\n\n{lines}", kind="error"
            )
        await self.load_skill_commands()  # after the custom commands, which win a clash

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
            custom = self.custom.get(parsed.name)
            if custom is None:
                # A command file written while Forge runs is found when first used.
                await self.load_custom_commands()
                custom = self.custom.get(parsed.name)
            if custom is not None:
                await self.run_custom(custom, parsed.argument)
                return
            if await self.run_skill(parsed.name, parsed.argument):
                return
            why = self.skill_not_runnable(parsed.name) or unknown_command_message(parsed.name)
            await self.app.chat.add_notice(why, kind="error")
            return
        await handler(parsed.argument)

    async def run_custom(self, command: CustomCommand, argument: str) -> None:
        """Send the command's expanded text as the user's message, on its model if it has
        one (for that turn only)."""
        if command.model and await self._refuse_if_busy():
            return
        from forge.tui.messages import UserMessageRequested

        if command.model:
            await self.app.chat.add_notice(
                f"`/{command.name}` runs this turn on `{command.model}`."
            )
        typed = f"/{command.name} {argument}".rstrip()
        expanded = command.expand(argument)
        self.app.post_message(UserMessageRequested(expanded, command.model, typed=typed))

    async def _refuse_if_busy(self) -> bool:
        if self.app.busy:
            await self.app.chat.add_notice(self.BUSY_MESSAGE, kind="error")
            return True
        return False

    async def command_settings(self, argument: str) -> None:
        """Open the settings overlay; saving hot-reloads through the reload controller."""
        from forge.tui.messages import SettingsRequested

        self.app.post_message(SettingsRequested())

    async def command_compact(self, argument: str) -> None:
        """Summarize now, guided by optional instructions."""
        from forge.tui.messages import CompactionRequested

        if await self._refuse_if_busy():
            return
        note = f" with instructions: {argument}" if argument else ""
        notice = await self.app.chat.add_notice(f"Compacting the conversation{note}…")
        self.app.post_message(CompactionRequested(argument, notice))

    async def command_context(self, argument: str) -> None:
        """Show the context breakdown and recent compactions."""
        from forge.tui.widgets.context_report import context_breakdown, context_report_markdown

        session = self.app.session
        context = session.reports.context()
        breakdown = replace(
            context_breakdown(context.messages, session.counter),
            tool_definitions=context.tool_tokens,
        )
        report = context_report_markdown(
            breakdown,
            current_tokens=context.current_tokens,
            max_tokens=context.max_tokens,
            recent_compactions=self.app.status.recent_compactions,
            window=context.window,
            window_note=session.reports.window_notice(),
            ledger=context.ledger,
        )
        if costs := session.reports.mcp_tool_tokens():
            lines = ", ".join(f"`{name}` {tokens:,}" for name, tokens in costs.items())
            report += f"\n\nMCP tool definitions (tokens per request): {lines}"
            report += f"\n\n{session.reports.mcp_definitions_line()}"
        await self.app.chat.add_notice(report)

    async def command_cost(self, argument: str) -> None:
        """Show the session's cost: per model, tokens and dollars; the compaction saving."""
        from forge.tui.session_controls import cost_details
        from forge.tui.widgets.cost_notice import CostNotice

        chat = self.app.chat
        width = chat.scrollable_content_region.width
        await chat.add_block(CostNotice(cost_details(self.app.session), width))

    async def command_mcp(self, argument: str) -> None:
        """List the MCP servers with their status and tools."""
        session = self.app.session
        if report := session.reports.mcp():
            await self.app.chat.add_notice(report)

    async def command_trust(self, argument: str) -> None:
        """Show the workspace's trust and what it would run, and ask to change it; `/trust
        revoke` forgets the decision (docs/adr/0034)."""
        from forge.tui.messages import TrustRequested

        self.app.post_message(TrustRequested(argument))

    async def command_hooks(self, argument: str) -> None:
        """List every hook with its event, matcher, command, source and state (ADR 0043)."""
        from forge.tui.widgets.hook_notice import HookListBlock

        await self.app.chat.add_block(HookListBlock(self.app.session.reports.hooks()))

    async def command_sandbox(self, argument: str) -> None:
        """Say what confines the model's commands, with which mechanism, or why nothing does
        (docs/adr/0053)."""
        if self.app.session.sandbox is None:
            await self.app.chat.add_notice("Sandbox: no session yet.")
            return
        lines = "\n".join(self.app.session.reports.sandbox())
        await self.app.chat.add_notice(f"```text\n{lines}\n```")

    async def command_tasks(self, argument: str) -> None:
        """List the background commands; Enter shows one's output, s stops it (ADR 0057)."""
        from forge.tui.background_flows import open_tasks

        await open_tasks(self.app, self.app.session, self.app.chat)

    async def command_clear(self, argument: str) -> None:
        """Start a new session: a fresh session and an empty chat (the app's flow says so)."""
        from forge.tui.messages import NewSessionRequested

        if await self._refuse_if_busy():
            return
        self.app.post_message(NewSessionRequested())

    async def command_model(self, argument: str) -> None:
        """Switch the model for this session (the config file is not changed)."""
        current = self.app.settings.llm.model
        if not argument:
            await self._list_models(current)
            return
        from forge.tui.messages import ModelSwitchRequested

        if await self._refuse_if_busy():
            return
        self.app.post_message(ModelSwitchRequested(argument))

    async def _list_models(self, current: str) -> None:
        """`/model` alone: the server's models (GET /v1/models) and how to switch."""
        from forge.session.model_types import ModelListError

        base_url = self.app.session.models_url()
        notice = await self.app.chat.add_notice(f"Asking {base_url} for its models…")
        try:
            ids = await self.app.session.list_models()
        except ModelListError as error:
            await notice.set_text(
                f"Could not list the server's models: {error}. Current model: `{current}`. "
                "Switch with `/model NAME`.",
                kind="error",
            )
            return
        listed = "\n".join(
            f"- `{model}`" + (" (current)" if model == current else "") for model in ids
        )
        await notice.set_text(
            f"Models at {base_url}:\n\n{listed or '(none listed)'}\n\n"
            f"Current: `{current}`. Switch with `/model NAME`."
        )

    async def command_help(self, argument: str) -> None:
        """Show the help screen."""
        from forge.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen())

    async def command_sessions(self, argument: str) -> None:
        """List this workspace's saved sessions; with an id (or its start), resume that one."""
        from forge.session.saved_sessions import SessionNotFoundError, SessionStore

        if not argument:
            from forge.session.saved_sessions import FullTextMatcher, SessionSearch

            # The search index is brought up to date (changed files read): in a thread, the UI
            # goes on meanwhile.
            search = SessionSearch()
            sessions = await asyncio.to_thread(search.sessions, self.app.workspace)
            if not sessions:
                await self.app.chat.add_notice("No saved sessions for this workspace yet.")
                return
            from forge.tui.screens.sessions import SessionsScreen

            matcher = FullTextMatcher(search, self.app.workspace)
            screen = SessionsScreen(sessions, self.app.session.session_id, matcher)
            self.app.push_screen(screen, callback=self._resume_chosen)
            return
        if await self._refuse_if_busy():
            return
        try:
            session_id = SessionStore().find(self.app.workspace, argument)
        except SessionNotFoundError as error:
            await self.app.chat.add_notice(
                f"Cannot resume `{argument}`: {error}. `/sessions` lists them.", kind="error"
            )
            return
        await self._resume(session_id)

    async def _resume_chosen(self, session_id: str | None) -> None:
        """The picker's choice (None: closed without one)."""
        if session_id is not None and not await self._refuse_if_busy():
            await self._resume(session_id)

    async def _resume(self, session_id: str) -> None:
        if session_id == self.app.session.session_id:
            await self.app.chat.add_notice("That is the session you are in.")
            return
        from forge.tui.messages import SessionResumeRequested

        self.app.post_message(SessionResumeRequested(session_id))

    async def command_copy(self, argument: str) -> None:
        """Copy the last answer, or with a number its N-th code block, to the clipboard."""
        from forge.tui.copying import copy_choice, describe_copied

        choice = copy_choice(self.app.session.messages, argument)
        if isinstance(choice, str):
            await self.app.chat.add_notice(choice, kind="error")
            return
        text, what = choice
        self.app.copy_to_clipboard(text)
        self.app.notify(describe_copied(text, what), markup=False, timeout=3)

    async def command_quit(self, argument: str) -> None:
        """Exit Forge."""
        from forge.tui.messages import QuitRequested

        self.app.post_message(QuitRequested())


def _as_slash_command(command: CustomCommand) -> SlashCommand:
    """A custom command's line in help, completion and the palette."""
    arguments = command.argument_hint or ("[arguments]" if command.takes_arguments else "")
    return SlashCommand(
        command.name,
        f"{command.summary} ({command.scope})",
        arguments,
        argument_required=command.takes_arguments,
    )
