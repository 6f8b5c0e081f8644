"""The session shown by the app, from start to switch (docs/adr/0016, 0032, 0041's addendum).

At start-up the app module imports only Textual and light Forge modules, so the first frame
shows at once; the settings, the provider (httpx) and the tokenizer are loaded by a thread
worker started after that frame, which posts `SessionLoaded`. Input that arrives before then
waits for it (`when_session_ready`). Later a slash command asks for a new session (/clear) or
a saved one (/sessions ID): it is built off the UI thread as at start-up — a resumed one's
newest screenful read in a thread and shown first, then the session built from what was read —
and the old one is closed with SessionEnd's reason.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App

from forge.tui.background_flows import end_background, say_start_notices
from forge.tui.config_problem import show_start_report
from forge.tui.event_dispatch import EventDispatcher
from forge.tui.hook_flows import start_session_hooks
from forge.tui.mcp_notices import McpSessionWatch
from forge.tui.messages import SessionLoaded, StartupFailed
from forge.tui.resume_notice import resumed_notice
from forge.tui.turn_flows import Turns
from forge.tui.widgets.chat import ChatView
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.header import ForgeHeader
from forge.tui.widgets.status import StatusPane

if TYPE_CHECKING:
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.session.saved_sessions import ResumedSession
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.history_preview import HeldLogRecords, SessionPreview
    from forge.tui.reload import ConfigReloadController


class SessionLifecycle:
    """Owns the session shown, the config store and settings it runs on, the reload
    controller that switches it, and whether it is loaded yet (`session_ready`)."""

    def __init__(
        self,
        app: App[Any],
        *,
        workspace: Path,
        session_choice: tuple[str | None, bool],
        chat: ChatView,
        status: StatusPane,
        header: ForgeHeader,
        dispatcher: EventDispatcher,
        mcp_watch: McpSessionWatch,
        commands: SlashCommandRunner,
        turns: Turns,
        show_settings: Callable[[Settings], None],
    ) -> None:
        self._app = app
        self.workspace = workspace
        self._session_choice = session_choice
        self._chat = chat
        self._status = status
        self._header = header
        self._dispatcher = dispatcher
        self._mcp_watch = mcp_watch
        self._commands = commands
        self._turns = turns
        self._show_settings = show_settings
        self.session_ready = asyncio.Event()
        """Set once the session (settings, provider, tokenizer, session) is loaded."""
        self._waiting: list[Callable[[], Any]] = []
        self._preview: SessionPreview | None = None
        self._held_logs: HeldLogRecords | None = None
        self.session: Session
        self.config_store: ConfigStore
        self.settings: Settings
        """The settings in use (the session's, and the widgets show them)."""
        self.reload_controller: ConfigReloadController

    @property
    def loaded(self) -> bool:
        """Whether a session is in use (given at construction, or loaded)."""
        return hasattr(self, "session")

    def use(self, session: Session, store: ConfigStore) -> None:
        """Show `session`, running on `store`'s settings."""
        from forge.tui.reload import ConfigReloadController

        self.session = session
        self.config_store = store
        self.settings = session.settings
        self.reload_controller = ConfigReloadController(app=self._app, store=store, session=session)
        self._show_settings(self.settings)
        self.show_session_name()

    # --- start-up ------------------------------------------------------------------------------
    async def show_preview(self) -> None:
        """A resumed session's newest rows, before the session (docs/adr/0032)."""
        from forge.tui.history_preview import show_preview

        if self._session_choice == (None, False):
            return
        self._held_logs, self._preview = await show_preview(
            self._chat, self.workspace, *self._session_choice
        )

    def load(self) -> None:
        """Load the config and build the session in a thread worker (after the first
        frame); posts `SessionLoaded`, or `StartupFailed`."""
        self._app.run_worker(
            self._load,
            name="load_session",
            group="startup",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _load(self) -> None:
        """Load the config and build the session (provider, tokenizer, session) in a thread;
        posts `SessionLoaded`, or `StartupFailed` for an unknown or malformed session id."""
        from forge.config.store import ConfigStore
        from forge.session.build import SessionOptions, build_session
        from forge.session.logs import configure_file_logging
        from forge.session.parts import secrets_of
        from forge.session.saved_sessions import SessionNotFoundError

        session_id, resume_latest = self._session_choice
        store = ConfigStore()
        settings = store.current.settings
        # Log to the file: anything written to the terminal would tear through the UI.
        configure_file_logging(secrets_of(settings, store.current.file_data))
        if self._held_logs is not None:
            self._held_logs.release()
        try:
            session = build_session(
                settings,
                self.workspace,
                SessionOptions(
                    session_id=session_id,
                    resume_latest=resume_latest,
                    resumed=self._preview.resumed if self._preview is not None else None,
                ),
            )
        except (SessionNotFoundError, ValueError) as error:
            self._app.post_message(StartupFailed(str(error)))
            return
        # The tokenizer loads after this, off the loop (`count_context`; docs/adr/0042).
        self._app.post_message(SessionLoaded(session, store))

    async def loaded_now(self, message: SessionLoaded) -> None:
        """`SessionLoaded`: show the session and start it."""
        self.use(message.session, message.store)
        self._status.show_activity("")
        await self.start()

    def when_session_ready(self, callback: Callable[[], Any]) -> None:
        """Run `callback` now if the session is loaded, else as soon as it is (in order)."""
        if self.session_ready.is_set():
            self._app.call_later(callback)
        else:
            self._waiting.append(callback)

    async def start(self) -> None:
        """The session's history, the start report, the custom commands and agent problems,
        SessionStart's hooks; then what runs in the background, and the input that waited."""
        chat, session = self._chat, self.session
        history = session.messages
        if any(message.role == "user" for message in history):
            await chat.show_history(history)
            notice, kind = resumed_notice(session)
            await chat.add_notice(notice, kind=kind)
            # Counted off the loop, not by the notice's count on it (ADR 0036).
            await session.reports.count_ahead()
            await self.say_recache_cost()
        banner = self._app.query_one(ConfigProblemBanner)
        await show_start_report(chat, banner, self.settings, self.config_store.current)
        await self._commands.load_custom_commands()
        if problems := session.agent_problems:  # agent definitions (docs/adr/0045)
            lines = "\n".join(f"- {problem}" for problem in problems)
            await chat.add_notice(f"Some agent definitions were not used:\n\n{lines}", kind="error")
        await say_start_notices(session, chat)  # what a dead Forge left running
        # SessionStart; the first prompt waits for it.
        start_session_hooks(self._app, self._dispatcher, session)
        # Once the ready hint is drawn (docs/adr/0042); a task may start before: its turn
        # starts what it needs itself.
        self.refresh_status()  # the gauge once the tokenizer is in (count_context)
        self._app.call_after_refresh(self._start_background)
        self.session_ready.set()
        waiting, self._waiting = self._waiting, []
        for callback in waiting:
            result = callback()
            if inspect.isawaitable(result):
                await result

    def _start_background(self) -> None:
        """What runs while the user types: the file watchers (their first use imports anyio's
        backend, ~0.15 s), MCP, asking for the context window, the tokenizer and the gauge."""
        self.reload_controller.start()
        self._mcp_watch.attach(self.session)  # notices in the chat; .forge/mcp.yaml watched
        self.session.start_background()
        self._app.run_worker(
            self._count_context(),
            name="count_context",
            group="context-count",
            exclusive=True,
            exit_on_error=False,
        )

    async def _count_context(self) -> None:
        """Load the tokenizer and count the conversation off the loop, then show the gauge
        (docs/adr/0042)."""
        await self.session.reports.count_ahead()
        self.refresh_gauge()

    # --- what the app shows of the session -----------------------------------------------------
    async def say_recache_cost(self) -> None:
        """Before the first request of a resumed session: what re-caching its prompt costs,
        when the provider's prompt cache has expired (docs/adr/0037)."""
        if notice := self.session.reports.recache_notice():
            await self._chat.add_notice(notice)

    def refresh_gauge(self) -> None:
        """Show the context manager's current view of the prompt size."""
        report = self.session.reports.context()
        self._status.gauge.show(report.current_tokens, report.max_tokens)
        self.refresh_status()

    def refresh_status(self) -> None:
        """The status lines that need no token count: plan, usage, mode, session."""
        self._status.plan.show_messages(self.session.messages)
        # A resumed session's totals, not only this run's.
        self._status.show_usage(*self.session.reports.token_totals)
        self._status.refresh_session_lines()

    def show_session_name(self) -> None:
        """Show the session's name and parent in the header (after /rename, a switch)."""
        self._header.show_session(self.session.history.name, self.session.history.forked_from)

    # --- switching -------------------------------------------------------------------------------
    async def new_session(self) -> None:
        """Replace the session with a fresh one (new conversation and session file) and empty
        the chat."""
        await self._chat.clear_chat()
        await self._commands.load_custom_commands()  # a new session re-reads the files
        await self._replace(None, None)

    async def resume_session(self, session_id: str) -> None:
        """Switch to the saved session `session_id`: its newest screenful first, then the
        session built off the UI thread, its history and the resume notices."""
        from forge.session.saved_sessions import SessionNotFoundError
        from forge.tui.history_preview import read_preview

        chat = self._chat
        await chat.clear_chat()
        await self._commands.load_custom_commands()
        preview = await asyncio.to_thread(read_preview, self.workspace, session_id, False)
        if preview is not None and preview.rows:
            await chat.show_rows(preview.rows)
        try:
            await self._replace(session_id, preview.resumed if preview else None)
        except (SessionNotFoundError, ValueError, OSError) as error:  # e.g. deleted meanwhile
            # The session in use stays: its conversation comes back on screen.
            await chat.clear_chat()
            await chat.show_history(self.session.messages)
            await chat.add_notice(f"Cannot resume `{session_id}`: {error}.", kind="error")
            return
        await chat.show_history(self.session.messages)
        notice, kind = resumed_notice(self.session)
        await chat.add_notice(notice, kind=kind)
        await self.session.reports.count_ahead()  # off the loop, not by the gauge (ADR 0036)
        await self.say_recache_cost()
        self.refresh_gauge()

    async def _replace(self, session_id: str | None, resumed: ResumedSession | None) -> None:
        from forge.session.build import SessionOptions, build_session

        old = self.session
        self.session = await asyncio.to_thread(
            build_session,
            self.settings,
            self.workspace,
            SessionOptions(session_id=session_id, resumed=resumed),
        )
        self.session.set_mode(old.policy.mode)  # the mode the user chose stays
        self.reload_controller.session = self.session
        self.show_session_name()
        self._mcp_watch.attach(self.session)
        self.session.start_background()  # built off the loop: MCP and the window start here
        reason = "clear" if session_id is None else "other"
        ended = await end_background(old, reason)  # said below, in the new session's chat
        await old.aclose(reason)  # SessionEnd's reason
        self._turns.queued.clear()
        self._status.reset_session()
        self.refresh_gauge()
        source = "clear" if session_id is None else "resume"
        start_session_hooks(self._app, self._dispatcher, self.session, source)
        for line in ended:
            await self._chat.add_notice(line.capitalize())
        await say_start_notices(self.session, self._chat)
