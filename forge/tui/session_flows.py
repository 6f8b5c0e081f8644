"""The app's session flows, asked for by slash commands with messages (docs/adr/0041's
addendum): a new session (/clear), a saved one resumed (/sessions ID), a rewound conversation
shown (/rewind), the workspace's trust (/trust) and quitting (/quit).

A session is built off the UI thread, as at start-up (docs/adr/0016, 0032): a resumed one's
newest screenful is read in a thread and shown first, then the session is built from what was
read (the whole file replayed in a thread), and the rest of its history waits for a scroll up.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App

from forge.tui.background_flows import end_background, say_start_notices
from forge.tui.hook_flows import start_session_hooks
from forge.tui.messages import (
    ConversationRewound,
    NewSessionRequested,
    QuitRequested,
    SessionRenamed,
    SessionResumeRequested,
    TrustRequested,
)

if TYPE_CHECKING:
    from forge.agent.history.session_file import ResumedSession
    from forge.config.settings import Settings
    from forge.session.core import Session
    from forge.tui.commands import SlashCommandRunner
    from forge.tui.mcp_notices import McpSessionWatch
    from forge.tui.reload import ConfigReloadController
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.chat_blocks import UserMessageBlock
    from forge.tui.widgets.header import ForgeHeader
    from forge.tui.widgets.prompt_input import PromptInput
    from forge.tui.widgets.status import StatusPane


class SessionFlows(App[int]):
    """Mixed into `ForgeApp`: replacing the session shown, and the commands' other flows."""

    workspace: Path
    session: Session
    settings: Settings
    reload_controller: ConfigReloadController
    mcp_watch: McpSessionWatch
    commands_runner: SlashCommandRunner
    chat: ChatView
    status: StatusPane
    header: ForgeHeader
    queued: list[tuple[str, UserMessageBlock]]

    if TYPE_CHECKING:

        @property
        def prompt(self) -> PromptInput: ...  # ForgeApp's

        def refresh_context_gauge(self) -> None: ...  # ForgeApp's

        async def _say_recache_cost(self) -> None: ...  # ForgeApp's

    @on(NewSessionRequested)
    async def _new_session_requested(self) -> None:
        await self.new_session()
        await self.chat.add_notice("New session started.")

    @on(SessionResumeRequested)
    async def _resume_requested(self, message: SessionResumeRequested) -> None:
        await self.resume_session(message.session_id)

    @on(SessionRenamed)
    def show_session_name(self) -> None:
        """Show the session's name and parent in the header (after /rename, a switch)."""
        self.header.show_session(self.session.session_name, self.session.forked_from)

    @on(ConversationRewound)
    async def _conversation_rewound(self, message: ConversationRewound) -> None:
        await self.chat.clear_chat()
        await self.chat.show_history(self.session.messages)
        self.prompt.load_text(message.prompt_text)
        self.prompt.move_cursor(self.prompt.document.end)
        self.refresh_context_gauge()
        await self.chat.add_notice(message.notice, kind=message.kind)

    @on(TrustRequested)
    async def _trust_requested(self, message: TrustRequested) -> None:
        await self.mcp_watch.trust.command(message.argument)

    @on(QuitRequested)
    def _quit_requested(self) -> None:
        self.exit(0)

    async def new_session(self) -> None:
        """Replace the session with a fresh one (new conversation and session file) and empty
        the chat."""
        await self.chat.clear_chat()
        await self.commands_runner.load_custom_commands()  # a new session re-reads the files
        await self._replace_session(None, None)

    async def resume_session(self, session_id: str) -> None:
        """Switch to the saved session `session_id`: its newest screenful first, then the
        session built off the UI thread, its history and the resume notices."""
        from forge.agent.history.session_file import SessionNotFoundError
        from forge.tui.history_preview import read_preview

        await self.chat.clear_chat()
        await self.commands_runner.load_custom_commands()
        preview = await asyncio.to_thread(read_preview, self.workspace, session_id, False)
        if preview is not None and preview.rows:
            await self.chat.show_rows(preview.rows)
        try:
            await self._replace_session(session_id, preview.resumed if preview else None)
        except (SessionNotFoundError, ValueError, OSError) as error:  # e.g. deleted meanwhile
            # The session in use stays: its conversation comes back on screen.
            await self.chat.clear_chat()
            await self.chat.show_history(self.session.messages)
            await self.chat.add_notice(f"Cannot resume `{session_id}`: {error}.", kind="error")
            return
        await self.chat.show_history(self.session.messages)
        await self.chat.add_notice(f"Resumed session `{self.session.session_id}`.")
        await self.session.count_ahead()  # off the loop, not by the gauge on it (ADR 0036)
        await self._say_recache_cost()
        self.refresh_context_gauge()

    async def _replace_session(
        self, session_id: str | None, resumed: ResumedSession | None
    ) -> None:
        from forge.session.build import build_session

        old = self.session
        self.session = await asyncio.to_thread(
            build_session, self.settings, self.workspace, session_id=session_id, resumed=resumed
        )
        self.session.set_mode(old.policy.mode)  # the mode the user chose stays
        self.reload_controller.session = self.session
        self.show_session_name()
        self.mcp_watch.attach(self.session)
        self.session.start_background()  # built off the loop: MCP and the window start here
        reason = "clear" if session_id is None else "other"
        ended = await end_background(old, reason)  # said below, in the new session's chat
        await old.aclose(reason)  # SessionEnd's reason
        self.queued.clear()
        self.status.reset_session()
        self.refresh_context_gauge()
        start_session_hooks(self, self.session, "clear" if session_id is None else "resume")
        for line in ended:
            await self.chat.add_notice(line.capitalize())
        await say_start_notices(self.session, self.chat)
