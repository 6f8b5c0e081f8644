"""The Forge app: the main screen, its widgets, and the session it shows.

Threading model (docs/adr/0016): one async worker per turn iterates the agent's events and
hands each to the `EventDispatcher` (`forge.tui.event_dispatch`), which posts it as a typed
message to the widgets that show it (chat, status pane, summarization panel, plan, header);
each handles its messages with `@on`. Approvals and questions arrive at the app as messages
carrying a future, answered by a dialog worker through `push_screen_wait`.

What the app does lives in mixins named for it: `TurnFlows` (input, the turn worker, the end
of a turn), `StartupFlow` (the session loaded after the first frame), `SessionFlows` (a new or
resumed session, and the other flows slash commands ask for with messages), `ConfigFlows`
(settings shown, reloads, /model), `KeyActions` (Esc, Ctrl+C, F1/F2, the mode key),
`DialogFlows` (approval and question dialogs), `EditorFlow` (Ctrl+G's editor, F3's status
pane), `AttentionSignals` (the bell and desktop notice). No module of `forge.tui` imports this one.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var

from forge.tui.attention import AttentionSignals
from forge.tui.background_flows import BACKGROUND_KEY, end_background, running_count
from forge.tui.command_table import ParsedCommand, SlashCommand
from forge.tui.commands import SlashCommandProvider, SlashCommandRunner
from forge.tui.config_flows import ConfigFlows
from forge.tui.dialog_flows import DialogFlows
from forge.tui.editor_flow import EDITOR_KEY, STATUS_KEY, EditorFlow
from forge.tui.event_dispatch import EventDispatcher
from forge.tui.key_actions import QUIT_CONFIRM_SECONDS, KeyActions
from forge.tui.mcp_notices import McpNoticeArrived, McpSessionWatch
from forge.tui.messages import InputHandled
from forge.tui.safe_notify import SafeNotifications
from forge.tui.session_controls import MODE_KEY, session_state
from forge.tui.session_flows import SessionFlows
from forge.tui.startup_flow import StartupFlow
from forge.tui.steering import STEER_KEY, take_back_queued
from forge.tui.turn_flows import TurnFlows
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.chat_blocks import NoticeBlock, UserMessageBlock
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
    from forge.tui.history_preview import HeldLogRecords, SessionPreview

__all__ = ["QUIT_CONFIRM_SECONDS", "ForgeApp", "run_tui"]


class ForgeApp(
    SafeNotifications,
    AttentionSignals,
    KeyActions,
    EditorFlow,
    TurnFlows,
    StartupFlow,
    SessionFlows,
    ConfigFlows,
    DialogFlows,
):
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

    busy: var[bool] = var(False, toggle_class="-busy")
    """A turn or a /compact run is in progress."""

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
        self._session_choice = (session_id, resume_latest)
        self.session_ready = asyncio.Event()
        """Set once the session (settings, provider, tokenizer, session) is loaded."""
        self._preview: SessionPreview | None = None
        self._held_logs: HeldLogRecords | None = None
        self._waiting_for_session: list[Callable[[], Any]] = []
        self._retry_notice: NoticeBlock | None = None
        """This turn's "retrying in…" line in the chat, updated in place."""
        self.queued: list[tuple[str, UserMessageBlock]] = []
        self.commands_runner = SlashCommandRunner(self)
        self.mcp_watch = McpSessionWatch(self)
        self.inputs_handled = 0
        """Prompt submissions fully handled (shown, queued, command run or turn started)."""
        self._warned_this_turn = False
        self._last_interrupt_key = -QUIT_CONFIRM_SECONDS
        # Shown until the settings are loaded (a fraction of a second).
        self.header = ForgeHeader(display_path(workspace), "…", "")
        self.chat = ChatView(id="chat")
        self.status = StatusPane(
            summarization_model="…", warning_threshold=0.7, critical_threshold=0.85, id="status"
        )
        self.status.session_source = lambda: session_state(getattr(self, "session", None))
        self.status.background_view.running_source = lambda: running_count(
            getattr(self, "session", None)
        )
        self.ended_background: list[str] = []
        """The background commands the exit ended, one line each (printed after the app)."""
        self.chat.conversation_source = lambda: self.session.messages
        self.chat.summaries_off_source = lambda: self.session.summaries_disabled
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
        if session is not None and store is not None:
            self._use_session(session, store)

    def _use_session(self, session: Session, store: ConfigStore) -> None:
        from forge.tui.reload import ConfigReloadController

        self.session = session
        self.config_store = store
        self.settings: Settings = session.settings
        self.reload_controller = ConfigReloadController(app=self, store=store, session=session)
        llm = self.settings.llm
        self.apply_theme(self.settings.ui.theme)
        self.header.show_models(llm.model, llm.summarization_model)
        self.header.show_session(session.session_name, session.forked_from)
        self.chat.show_reasoning = self.settings.ui.show_reasoning
        self.status.summarization.set_model(llm.effective_summarization_model)
        context = self.settings.context
        self.status.gauge.set_thresholds(context.warning_threshold, context.auto_summary_threshold)

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
        self.prompt.take_back_queued = lambda: take_back_queued(self)
        self.query_one(FileHints).agent_names_source = lambda: (
            self.session.agent_names() if self.session_ready.is_set() else []
        )
        if hasattr(self, "session"):
            await self._start_session()
        else:
            self.status.show_activity("starting…")
            if self._session_choice != (None, False):
                await self._show_preview()  # a resumed session's newest rows first (ADR 0032)
            # After the first frame: the loading must not delay it.
            self.call_after_refresh(self.load_session)

    async def on_unmount(self) -> None:
        if hasattr(self, "session"):
            self.ended_background = await end_background(self.session, "exit")
            await self.session.aclose()

    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        if not self.session_ready.is_set():
            # Typed during start-up: handled, in order, once the session is loaded.
            self._waiting_for_session.append(lambda: self.on_prompt_input_submitted(message))
            return
        try:
            await self._handle_input(message.text)
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

    async def on_mcp_notice_arrived(self, message: McpNoticeArrived) -> None:
        await self.chat.add_notice(message.text, kind=message.kind)

    # --- the session shown (replaced by `SessionFlows`) -------------------------------------
    async def _say_recache_cost(self) -> None:
        """Before the first request of a resumed session: what re-caching its prompt costs,
        when the provider's prompt cache has expired (docs/adr/0037)."""
        if notice := self.session.recache_notice():
            await self.chat.add_notice(notice)

    def refresh_context_gauge(self) -> None:
        """Show the context manager's current view of the prompt size."""
        report = self.session.context_report()
        self.status.gauge.show(report.current_tokens, report.max_tokens)
        self.refresh_session_status()

    def refresh_session_status(self) -> None:
        """The status lines that need no token count: plan, usage, mode, session."""
        self.status.plan.show_messages(self.session.messages)
        # A resumed session's totals, not only this run's.
        self.status.show_usage(*self.session.token_totals)
        self.status.refresh_session_lines()


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

    from forge.agent.history.session_file import SessionNotFoundError, SessionStore
    from forge.agent.history.session_fork import fork_session

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
