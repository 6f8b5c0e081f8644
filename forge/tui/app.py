"""The Forge app: the main screen, its widgets, and the controllers that do what it does.

Threading model (docs/adr/0016): one async worker per turn iterates the agent's events and
hands each to the `EventDispatcher` (`forge.tui.event_dispatch`), which posts it as a typed
message to the widgets that show it (chat, status pane, summarization panel, plan, header);
each handles its messages with `@on`. Approvals and questions arrive at the app as messages
carrying a future, answered by a dialog worker through `push_screen_wait`.

`ForgeApp` is a Textual `App` and nothing else: it composes the widgets, holds the key
bindings, and hands every message and action, in one line, to the controller that owns that
part of the state (docs/adr/0059 part 4): `SessionLifecycle` (the session shown, its settings
and reload controller, start-up and switching; `session_flows`), `Turns` (the turn worker, the
queue, interrupting; `turn_flows`), `Configuration` (settings shown, `/model`, the overlay,
reloads; `config_flows`), `Keys` (`key_actions`), `Dialogs` (`dialog_flows`), `Attention`
(`attention`) and `PromptEditor` (`editor_flow`). No module of `forge.tui` imports this one.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel

from forge.text_safety import terminal_safe
from forge.tui.attention import Attention
from forge.tui.background_flows import (
    BACKGROUND_KEY,
    MOVED_NOTICE,
    end_background,
    running_count,
)
from forge.tui.command_table import ParsedCommand, SlashCommand
from forge.tui.commands import SlashCommandProvider, SlashCommandRunner
from forge.tui.config_flows import Configuration
from forge.tui.dialog_flows import Dialogs
from forge.tui.editor_flow import EDITOR_KEY, STATUS_KEY, PromptEditor
from forge.tui.event_dispatch import EventDispatcher
from forge.tui.key_actions import QUIT_CONFIRM_SECONDS, Keys
from forge.tui.mcp_notices import McpNoticeArrived, McpSessionWatch
from forge.tui.messages import (
    ApprovalRequestedShown,
    CompactionRequested,
    ContextWarningShown,
    ConversationRewound,
    InputHandled,
    ModelSwitchRequested,
    NewSessionRequested,
    QuestionAnswered,
    QuestionAskedShown,
    QuitRequested,
    RequestResumed,
    SessionLoaded,
    SessionRenamed,
    SessionResumeRequested,
    SettingsRequested,
    SkillsDisabledSaveRequested,
    StartupFailed,
    TrustRequested,
    TurnEnded,
    UserMessageRequested,
)
from forge.tui.retry_notices import RetryScheduledShown
from forge.tui.session_controls import MODE_KEY, session_state
from forge.tui.session_flows import SessionLifecycle
from forge.tui.steering import STEER_KEY, steer_prompt, take_back_queued
from forge.tui.turn_flows import Turns
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import UserMessageBlock
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.file_hints import FileHints
from forge.tui.widgets.footer import ForgeFooter
from forge.tui.widgets.formatting import display_path
from forge.tui.widgets.header import ForgeHeader
from forge.tui.widgets.prompt_input import PromptArea, PromptInput
from forge.tui.widgets.status import StatusPane

if TYPE_CHECKING:
    # Heavy imports (pydantic-settings, httpx, tiktoken), loaded after the first frame.
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.tui.reload import ConfigReloadController

__all__ = ["QUIT_CONFIRM_SECONDS", "ForgeApp", "run_tui"]


class ForgeApp(App[int]):
    """Forge's full-screen UI over one `Session` (agent, context manager, provider)."""

    CSS_PATH = "app.tcss"
    TITLE = "Forge"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    """Below 110 columns the status pane narrows (app.tcss), leaving the chat room to read."""
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    """Below 32 rows the status pane drops its least urgent lines (app.tcss), so a running
    summarization's progress stays in view under a plan."""
    COMMANDS = App.COMMANDS | {SlashCommandProvider}
    BINDINGS = [
        Binding("ctrl+c", "interrupt_or_quit", "Interrupt/quit", priority=True),
        Binding("escape", "interrupt", "Interrupt"),
        # Shown while a turn runs (docs/adr/0057); F1's label gives it room at 80 columns.
        Binding(STEER_KEY, "steer", "steer", priority=True),
        Binding(BACKGROUND_KEY, "background_command", "bg", priority=True),
        # Most terminals cannot send Ctrl+, (it needs the kitty keyboard protocol): F2 works
        # everywhere and is the one the footer shows.
        Binding("f2", "open_settings", "Settings"),
        Binding("f2", "open_settings_during_turn", "Settings", show=False),
        Binding("ctrl+comma", "open_settings", "Settings", show=False),
        Binding("f1", "help", "Help"),
        Binding("f1", "help_during_turn", "Help", show=False),
        Binding(MODE_KEY, "cycle_mode", "Mode"),
        Binding(EDITOR_KEY, "edit_prompt", "Editor", show=False),
        Binding(STATUS_KEY, "toggle_status", "Status pane", show=False),
    ]

    def __init__(
        self,
        *,
        workspace: Path,
        session: Session | None = None,
        store: ConfigStore | None = None,
        session_id: str | None = None,
        resume_latest: bool = False,
    ) -> None:
        """With `session` and `store`, start on them; without, load both in a worker after
        the first frame (the session `session_id`, or the latest one with `resume_latest`)."""
        super().__init__()
        self.workspace = workspace
        self.inputs_handled = 0
        """Prompt submissions fully handled (shown, queued, command run or turn started)."""
        # Shown until the settings are loaded (a fraction of a second).
        self.header = ForgeHeader(display_path(workspace), "…", "")
        self.chat = ChatView(id="chat")
        self.status = StatusPane(
            summarization_model="…", warning_threshold=0.7, critical_threshold=0.85, id="status"
        )
        self.commands_runner = SlashCommandRunner(self)
        self.mcp_watch = McpSessionWatch(self)
        self.status.background_view.running_source = lambda: running_count(
            self.sessions.session if self.sessions.loaded else None
        )
        self.ended_background: list[str] = []
        """The background commands the exit ended, one line each (printed after the app)."""
        self.dispatcher = EventDispatcher(
            {
                "app": self,
                "chat": self.chat,
                "status": self.status,
                "summarization": self.status.summarization,
                "plan": self.status.plan,
                "subagents": self.status.subagents,
                "header": self.header,
            }
        )
        """Turns the turn worker's events into the messages the widgets handle."""
        self.attention = Attention(self, self._settings_if_loaded)
        """The bell and desktop notice (docs/adr/0049)."""
        self.dialogs = Dialogs(self, self.chat, self.attention, self.action_interrupt)
        """A turn's approval and question dialogs."""
        self.editor = PromptEditor(self, lambda: self.prompt)
        """Ctrl+G: the prompt in the user's editor."""
        self.turns = Turns(
            self,
            chat=self.chat,
            status=self.status,
            dispatcher=self.dispatcher,
            commands=self.commands_runner,
            dialogs=self.dialogs,
            attention=self.attention,
            session=lambda: self.session,
            settings=lambda: self.sessions.settings,
            config_store=lambda: self.sessions.config_store,
            refresh_gauge=lambda: self.sessions.refresh_gauge(),
        )
        """The turn worker, the messages queued behind a turn, interrupting."""
        self.sessions = SessionLifecycle(
            self,
            workspace=workspace,
            session_choice=(session_id, resume_latest),
            chat=self.chat,
            status=self.status,
            header=self.header,
            dispatcher=self.dispatcher,
            mcp_watch=self.mcp_watch,
            commands=self.commands_runner,
            turns=self.turns,
            show_settings=lambda settings: self.configuration.push(settings),
        )
        """The session shown: loading, starting, switching; its settings and reloads."""
        self.configuration = Configuration(
            self,
            chat=self.chat,
            header=self.header,
            status=self.status,
            commands=self.commands_runner,
            sessions=self.sessions,
        )
        """The settings shown in the widgets, and their changes."""
        self.keys = Keys(
            self,
            prompt=lambda: self.prompt,
            status=self.status,
            turns=self.turns,
            session=lambda: self.session,
        )
        """What the keys do (the bindings above name the actions)."""
        self.status.session_source = lambda: session_state(self.session_if_loaded)
        self.chat.conversation_source = lambda: self.session.messages
        self.chat.summaries_off_source = lambda: self.session.reports.summaries_disabled
        if session is not None and store is not None:
            self.sessions.use(session, store)

    # --- what the controllers own, as the app's commands and tests read it -------------------
    @property
    def session(self) -> Session:
        """The session shown (AttributeError before it is loaded)."""
        return self.sessions.session

    @property
    def session_if_loaded(self) -> Session | None:
        """The session shown, or None while it loads."""
        return self.sessions.session if self.sessions.loaded else None

    def _settings_if_loaded(self) -> Settings | None:
        return self.sessions.settings if self.sessions.loaded else None

    @property
    def settings(self) -> Settings:
        """The settings in use."""
        return self.sessions.settings

    @property
    def config_store(self) -> ConfigStore:
        """The config file's store."""
        return self.sessions.config_store

    @property
    def reload_controller(self) -> ConfigReloadController:
        """The one path new settings take to the session (forge.tui.reload)."""
        return self.sessions.reload_controller

    @property
    def session_ready(self) -> asyncio.Event:
        """Set once the session is loaded."""
        return self.sessions.session_ready

    @property
    def busy(self) -> bool:
        """A turn or a /compact run is in progress."""
        return self.turns.busy

    @busy.setter
    def busy(self, value: bool) -> None:
        self.turns.busy = value

    @property
    def queued(self) -> list[tuple[str, UserMessageBlock]]:
        """Messages typed while a turn runs."""
        return self.turns.queued

    def when_session_ready(self, callback: Callable[[], Any]) -> None:
        """Run `callback` now if the session is loaded, else as soon as it is (in order)."""
        self.sessions.when_session_ready(callback)

    async def show_settings(self, settings: Settings) -> None:
        """Reflect settings now in use in every widget that shows them."""
        await self.configuration.show(settings)

    # --- the screen ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="body"):
            with Vertical(id="main"):
                yield ConfigProblemBanner(id="config-problem")
                yield self.chat
                yield PromptArea(id="prompt-area")
            yield self.status
        yield ForgeFooter()

    @property
    def prompt(self) -> PromptInput:
        """The input the user types into."""
        return self.query_one(PromptInput)

    async def on_mount(self) -> None:
        # Focus first: keys typed as soon as the screen shows must land in the prompt.
        self.prompt.focus()
        self.prompt.take_back_queued = lambda: take_back_queued(self)  # type: ignore[arg-type]
        self.query_one(FileHints).agent_names_source = lambda: (
            self.session.agent_names() if self.session_ready.is_set() else []
        )
        if self.sessions.loaded:
            await self.sessions.start()
        else:
            self.status.show_activity("starting…")
            await self.sessions.show_preview()  # a resumed session's newest rows first (ADR 0032)
            # After the first frame: the loading must not delay it.
            self.call_after_refresh(self.sessions.load)

    async def on_unmount(self) -> None:
        if self.sessions.loaded:
            self.ended_background = await end_background(self.session, "exit")
            await self.session.aclose()

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """`App.notify` with `message` and `title` made terminal-safe: toasts quote config
        errors, paths and server messages, and Textual's toast passes ESC through (a
        screen's or widget's `notify` delegates here; docs/adr/0035). Markup stays the
        caller's choice: text from outside goes with `markup=False`."""
        super().notify(
            terminal_safe(message),
            title=terminal_safe(title),
            severity=severity,
            timeout=timeout,
            markup=markup,
        )

    # --- input -----------------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if not self.session_ready.is_set():
            # Typed during start-up: handled, in order, once the session is loaded.
            self.when_session_ready(lambda: self.on_prompt_input_submitted(message))
            return
        try:
            await self.turns.handle_input(message.text)
        finally:
            # Behind any flow the input's command asked the app for (`forge.tui.messages`).
            self.post_message(InputHandled())

    def on_prompt_input_page_requested(self, message: PromptInput.PageRequested) -> None:
        if message.up:
            self.chat.scroll_page_up(animate=False)
        else:
            self.chat.scroll_page_down(animate=False)

    def on_input_handled(self, message: InputHandled) -> None:
        self.inputs_handled += 1

    def invoke_slash_command(self, command: SlashCommand) -> None:
        """From the command palette: run `command`, or start typing it when it needs an
        argument."""
        if command.argument_required:
            self.prompt.load_text(f"/{command.name} ")
            self.prompt.move_cursor(self.prompt.document.end)
            self.prompt.focus()
            return
        parsed = ParsedCommand(command.name, "", command)
        self.when_session_ready(lambda: self.commands_runner.run(parsed))

    # --- keys: one line each to `Keys`, `Turns`, `PromptEditor` ----------------------------------
    def on_key(self, event: events.Key) -> None:
        self.keys.key(event)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Esc, steer and bg mean something only while a turn runs; hidden from the footer
        # otherwise. F1's and F2's labels make room for them during a turn at 80 columns (the
        # keys still work: `…_during_turn`).
        if action in ("interrupt", "steer", "background_command"):
            return self.busy
        if action in ("help", "open_settings"):
            return not self.busy
        return True

    def action_open_settings_during_turn(self) -> None:
        """F2 while a turn runs: the settings, its footer label making room."""
        self.action_open_settings()

    def action_help_during_turn(self) -> None:
        """F1 while a turn runs: help, its footer label making room for `steer`."""
        self.action_help()

    def action_background_command(self) -> None:
        """Move the model's running command to the background (docs/adr/0057)."""
        why = self.session.move_command_to_background()
        self.notify(f"Cannot move it to the background: {why}" if why else MOVED_NOTICE, timeout=3)

    def action_steer(self) -> None:
        """Send the prompt's text into the running turn now (docs/adr/0057)."""
        steer_prompt(self)  # type: ignore[arg-type]

    def action_interrupt(self) -> None:
        """Stop the running turn; queued messages go back into the prompt, not lost."""
        self.turns.interrupt()

    def action_interrupt_or_quit(self) -> None:
        """Ctrl+C: copy a selection, clear a draft, interrupt, or (twice) quit."""
        self.keys.interrupt_or_quit()

    def action_open_settings(self) -> None:
        """Open the /settings overlay."""
        parsed = ParsedCommand("settings", "", None)
        self.when_session_ready(lambda: self.commands_runner.run(parsed))

    def action_cycle_mode(self) -> None:
        """Switch to the next permission mode (docs/adr/0029)."""
        self.when_session_ready(self.keys.cycle_mode)

    def action_help(self) -> None:
        """Show help."""
        self.call_later(self.commands_runner.run, ParsedCommand("help", "", None))

    def action_edit_prompt(self) -> None:
        """Open the prompt's text in `$VISUAL`/`$EDITOR`; take back what was saved."""
        self.editor.edit()

    def action_toggle_status(self) -> None:
        """Hide the status pane (more room for the chat on a narrow terminal), or show it."""
        self.status.display = not self.status.display

    # --- the turn: one line each to `Turns` -----------------------------------------------------
    @on(CompactionRequested)
    def _compaction_requested(self, message: CompactionRequested) -> None:
        self.turns.start_compaction(message.instructions, message.notice)

    @on(UserMessageRequested)
    async def _user_message_requested(self, message: UserMessageRequested) -> None:
        await self.turns.send_user_message(message.text, message.model, message.typed)

    async def on_retry_scheduled_shown(self, message: RetryScheduledShown) -> None:
        await self.turns.retry_notice(message)

    @on(RequestResumed)
    def _request_resumed(self) -> None:
        self.turns.request_resumed()

    @on(ContextWarningShown)
    def _context_warned(self, message: ContextWarningShown) -> None:
        self.turns.context_warned(message)

    async def on_turn_ended(self, message: TurnEnded) -> None:
        await self.turns.turn_ended(message)

    # --- dialogs and attention -------------------------------------------------------------------
    async def on_approval_requested_shown(self, message: ApprovalRequestedShown) -> None:
        await self.dialogs.approval_needed(message)

    async def on_question_asked_shown(self, message: QuestionAskedShown) -> None:
        await self.dialogs.question_needed(message)

    async def on_question_answered(self, message: QuestionAnswered) -> None:
        await self.chat.add_user_message(message.answer)

    def on_app_focus(self, event: events.AppFocus) -> None:
        self.attention.focus_changed()

    def on_app_blur(self, event: events.AppBlur) -> None:
        self.attention.focus_changed()

    async def on_mcp_notice_arrived(self, message: McpNoticeArrived) -> None:
        await self.chat.add_notice(message.text, kind=message.kind)

    # --- the session: one line each to `SessionLifecycle` ----------------------------------------
    async def on_session_loaded(self, message: SessionLoaded) -> None:
        await self.sessions.loaded_now(message)

    def on_startup_failed(self, message: StartupFailed) -> None:
        self.exit(2, return_code=2, message=f"forge: {message.error}")

    @on(NewSessionRequested)
    async def _new_session_requested(self) -> None:
        await self.sessions.new_session()
        await self.chat.add_notice("New session started.")

    @on(SessionResumeRequested)
    async def _resume_requested(self, message: SessionResumeRequested) -> None:
        await self.sessions.resume_session(message.session_id)

    @on(SessionRenamed)
    def _session_renamed(self) -> None:
        self.sessions.show_session_name()

    @on(ConversationRewound)
    async def _conversation_rewound(self, message: ConversationRewound) -> None:
        await self.chat.clear_chat()
        await self.chat.show_history(self.session.messages)
        self.prompt.load_text(message.prompt_text)
        self.prompt.move_cursor(self.prompt.document.end)
        self.sessions.refresh_gauge()
        await self.chat.add_notice(message.notice, kind=message.kind)

    @on(TrustRequested)
    async def _trust_requested(self, message: TrustRequested) -> None:
        await self.mcp_watch.trust.command(message.argument)

    @on(QuitRequested)
    def _quit_requested(self) -> None:
        self.exit(0)

    # --- settings: one line each to `Configuration` ----------------------------------------------
    @on(SettingsRequested)
    def _settings_requested(self) -> None:
        self.configuration.open_overlay()

    @on(ModelSwitchRequested)
    async def _model_switch_requested(self, message: ModelSwitchRequested) -> None:
        await self.configuration.switch_model(message)

    @on(SkillsDisabledSaveRequested)
    async def _skills_disabled_save_requested(self, message: SkillsDisabledSaveRequested) -> None:
        await self.configuration.save_skills_disabled(message)

    def watch_theme(self, theme: str) -> None:
        # Textual may set its theme while `App.__init__` runs, before the controllers exist.
        if (configuration := getattr(self, "configuration", None)) is not None:
            configuration.theme_changed(theme)

    async def on_config_reload_controller_applied(
        self, message: ConfigReloadController.Applied
    ) -> None:
        await self.configuration.reload_applied(message.settings)

    async def on_config_reload_controller_rejected(
        self, message: ConfigReloadController.Rejected
    ) -> None:
        await self.configuration.reload_rejected(message.error)


def run_tui(args: argparse.Namespace) -> int:
    """`forge`: open the TUI on `args.workspace`, optionally resuming a session.

    Only the workspace is checked here; the config, the provider and the tokenizer load in
    the app after its first frame. An unknown `--resume` id ends the app with exit code 2.
    """
    import sys

    workspace = Path(args.workspace).expanduser().resolve()
    if not workspace.is_dir():
        print(f"forge: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    from forge.agent.exit_signals import exit_after_grace, exit_code_for, exit_on_signals

    session_id = getattr(args, "resume", None)
    resume_latest = bool(getattr(args, "continue_session", False))
    if getattr(args, "fork", False):
        session_id = forked_session(workspace, session_id, resume_latest)
        if session_id is None:
            return 2
        resume_latest = False
    app = ForgeApp(workspace=workspace, session_id=session_id, resume_latest=resume_latest)

    # SIGTERM/SIGHUP/SIGINT: kill running commands, end the turn, exit 128+N (ADR 0021); if
    # that hangs (a closed terminal can wedge Textual's output), end the process anyway (15 s).
    def exit_app(number: int) -> None:
        app.exit(return_code=exit_code_for(number))
        exit_after_grace(exit_code_for(number))

    # The Runner's close() settles the turn worker (cancels and awaits it), as asyncio.run does.
    with asyncio.Runner() as runner, exit_on_signals(runner.get_loop(), exit_app):
        result = app.run(loop=runner.get_loop())
    for ended in app.ended_background:  # nothing outlives the session (docs/adr/0057)
        print(ended)
    if line := resume_line(app):
        print(line)
    return result if isinstance(result, int) else app.return_code or 0


def forked_session(workspace: Path, session_id: str | None, resume_latest: bool) -> str | None:
    """`forge --resume ID --fork` (or `--continue --fork`): the id of a new fork of that
    session (docs/adr/0058), or None with the reason on stderr."""
    import sys

    from forge.session.saved_sessions import SessionNotFoundError, SessionStore, fork_session

    store = SessionStore()
    try:
        if session_id is None and resume_latest:
            session_id = store.latest_id_for(workspace)
        if session_id is None:
            print("forge: --fork needs --resume ID or --continue", file=sys.stderr)
            return None
        return fork_session(store, store.find(workspace, session_id))
    except (SessionNotFoundError, ValueError, OSError) as error:
        print(f"forge: cannot fork: {error}", file=sys.stderr)
        return None


def resume_line(app: ForgeApp) -> str:
    """What exit prints: the session's ID and how to reopen it ("" for an empty session,
    which is not saved)."""
    session = getattr(app, "session", None)
    if session is None or not any(message.role == "user" for message in session.messages):
        return ""
    return f"Session {session.session_id}\nResume it with: forge --resume {session.session_id}"
