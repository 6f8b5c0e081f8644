"""The app's start-up: the session loaded after the first frame, then the session started
(docs/adr/0016).

The app module imports only Textual and light Forge modules, so the first frame shows at once;
the settings, the provider (httpx) and the tokenizer are loaded by a thread worker started
after that frame, which posts `SessionLoaded`. Input that arrives before then waits for it
(`when_session_ready`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App

from forge.tui.background_flows import say_start_notices
from forge.tui.config_problem import show_start_report
from forge.tui.hook_flows import start_session_hooks
from forge.tui.messages import SessionLoaded, StartupFailed
from forge.tui.widgets.config_banner import ConfigProblemBanner

if TYPE_CHECKING:
    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.history_preview import HeldLogRecords, SessionPreview
    from forge.tui.mcp_notices import McpSessionWatch
    from forge.tui.reload import ConfigReloadController
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.status import StatusPane


class StartupFlow(App[int]):
    """Mixed into `ForgeApp`: loading the session after the first frame, starting a session."""

    workspace: Path
    session: Session
    config_store: ConfigStore
    settings: Settings
    reload_controller: ConfigReloadController
    chat: ChatView
    status: StatusPane
    mcp_watch: McpSessionWatch
    commands_runner: SlashCommandRunner
    session_ready: asyncio.Event
    _session_choice: tuple[str | None, bool]
    _preview: SessionPreview | None
    _held_logs: HeldLogRecords | None
    _waiting_for_session: list[Callable[[], Any]]

    if TYPE_CHECKING:

        def _use_session(self, session: Session, store: ConfigStore) -> None: ...  # ForgeApp's

        def refresh_session_status(self) -> None: ...  # ForgeApp's

        def refresh_context_gauge(self) -> None: ...  # ForgeApp's

        async def _say_recache_cost(self) -> None: ...  # ForgeApp's

    async def _show_preview(self) -> None:
        """A resumed session's newest rows, before the session (docs/adr/0032)."""
        from forge.tui.history_preview import show_preview

        self._held_logs, self._preview = await show_preview(
            self.chat, self.workspace, *self._session_choice
        )

    @work(thread=True, exclusive=True, group="startup", exit_on_error=False)
    def load_session(self) -> None:
        """Load the config and build the session (provider, tokenizer, session) in a thread;
        posts `SessionLoaded`, or `StartupFailed` for an unknown or malformed session id."""
        from forge.agent.history.session_file import SessionNotFoundError
        from forge.agent.logs import configure_file_logging
        from forge.config.store import ConfigStore
        from forge.session.build import build_session
        from forge.session.parts import secrets_of

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
                session_id=session_id,
                resume_latest=resume_latest,
                resumed=self._preview.resumed if self._preview is not None else None,
            )
        except (SessionNotFoundError, ValueError) as error:
            self.post_message(StartupFailed(str(error)))
            return
        # The tokenizer loads after this, off the loop (`count_context`; docs/adr/0042).
        self.post_message(SessionLoaded(session, store))

    async def on_session_loaded(self, message: SessionLoaded) -> None:
        self._use_session(message.session, message.store)
        self.status.show_activity("")
        await self._start_session()

    def _start_background(self) -> None:
        """What runs while the user types: the file watchers (their first use imports anyio's
        backend, ~0.15 s), MCP, asking for the context window, the tokenizer and the gauge."""
        self.reload_controller.start()
        self.mcp_watch.attach(self.session)  # notices in the chat; .forge/mcp.yaml watched
        self.session.start_background()
        self.count_context()

    @work(exclusive=True, group="context-count", exit_on_error=False)
    async def count_context(self) -> None:
        """Load the tokenizer and count the conversation off the loop, then show the gauge
        (docs/adr/0042)."""
        await self.session.count_ahead()
        self.refresh_context_gauge()

    def on_startup_failed(self, message: StartupFailed) -> None:
        self.exit(2, return_code=2, message=f"forge: {message.error}")

    def when_session_ready(self, callback: Callable[[], Any]) -> None:
        """Run `callback` now if the session is loaded, else as soon as it is (in order)."""
        if self.session_ready.is_set():
            self.call_later(callback)
        else:
            self._waiting_for_session.append(callback)

    async def _start_session(self) -> None:
        history = self.session.messages
        if any(message.role == "user" for message in history):
            await self.chat.show_history(history)
            await self.chat.add_notice(f"Resumed session `{self.session.session_id}`.")
            # Counted off the loop, not by the notice's count on it (ADR 0036).
            await self.session.count_ahead()
            await self._say_recache_cost()
        banner = self.query_one(ConfigProblemBanner)
        await show_start_report(self.chat, banner, self.settings, self.config_store.current)
        await self.commands_runner.load_custom_commands()
        if problems := self.session.agent_problems:  # agent definitions (docs/adr/0045)
            lines = "\n".join(f"- {problem}" for problem in problems)
            await self.chat.add_notice(
                f"Some agent definitions were not used:\n\n{lines}", kind="error"
            )
        await say_start_notices(self.session, self.chat)  # what a dead Forge left running
        start_session_hooks(self, self.session)  # SessionStart; the first prompt waits for it
        # Once the ready hint is drawn (docs/adr/0042); a task may start before: its turn
        # starts what it needs itself.
        self.refresh_session_status()  # the gauge once the tokenizer is in (count_context)
        self.call_after_refresh(self._start_background)
        self.session_ready.set()
        waiting, self._waiting_for_session = self._waiting_for_session, []
        for callback in waiting:
            result = callback()
            if inspect.isawaitable(result):
                await result
