"""MCP servers in the TUI while it runs: their background notices (failed to start, crashed,
down, reloaded) shown in the chat, and the project's `.forge/mcp.yaml` watched so that edits
to it apply between turns (edits to `config.yaml` arrive through the reload controller)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message

if TYPE_CHECKING:
    # The app imports this module before its first frame: nothing heavy (the MCP SDK,
    # pydantic) may load with it.
    from forge.agent.mcp.notices import McpServerNotice
    from forge.session.core import Session


@dataclass
class McpNoticeArrived(Message):
    """A notice from the session's MCP servers, to show in the chat."""

    notice: McpServerNotice

    @property
    def text(self) -> str:
        """The chat line."""
        return self.notice.text()

    @property
    def kind(self) -> str:
        """The notice block's kind: "error" when tools became unavailable, else "info"."""
        return "error" if self.notice.is_error else "info"


class McpSessionWatch:
    """Connects one session's MCP servers to the app: notices become `McpNoticeArrived`
    messages, the project's server file is watched, and the workspace's trust is asked
    about (`trust`, docs/adr/0034). `attach` again for a new session."""

    def __init__(self, app: App[Any]) -> None:
        from forge.tui.trust_flow import WorkspaceTrustFlow

        self.app = app
        self._unsubscribe: Callable[[], None] | None = None
        self._session: Session | None = None
        self.trust = WorkspaceTrustFlow(app)
        """Asks whether the workspace's own definitions may run; `/trust`."""

    def attach(self, session: Session) -> None:
        """Follow `session`'s servers (and stop following the previous session's)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._session = session
        if session.servers.mcp is None:
            return
        self._unsubscribe = session.servers.subscribe(self._post)
        self.trust.attach(session)  # asks now if the workspace defines undecided servers
        self.app.run_worker(
            session.servers.watch_project_file(self._project_file_changed),
            name="mcp-project-watch",
            group="mcp-project-watch",
            exclusive=True,
            exit_on_error=False,
        )

    def _post(self, notice: McpServerNotice) -> None:
        self.app.post_message(McpNoticeArrived(notice))

    async def _project_file_changed(self) -> None:
        session = self._session
        if session is not None and session.servers.mcp is not None:
            # Changed definitions stop being trusted first, then the user is asked about them.
            session.servers.project_file_changed()
            await self.trust.check()
