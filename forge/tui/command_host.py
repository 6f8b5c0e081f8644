"""What the slash-command handlers (`forge.tui.commands`, `forge.tui.checkpoint_commands`)
need of the app, as a Protocol of its own: neither handler module imports the app nor the other
(no import cycle inside `forge.tui`); `ForgeApp` provides it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.screen import Screen

    from forge.config.settings import Settings
    from forge.config.store import ConfigStore
    from forge.session.core import Session
    from forge.tui.mcp_notices import McpSessionWatch
    from forge.tui.reload import ConfigReloadController
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.chat_blocks import NoticeBlock
    from forge.tui.widgets.prompt_input import PromptInput
    from forge.tui.widgets.status import StatusPane


class CommandHost(Protocol):
    """What the command handlers need of the app (`ForgeApp` provides it)."""

    chat: ChatView
    status: StatusPane
    runtime: Session
    settings: Settings
    config_store: ConfigStore
    reload_controller: ConfigReloadController
    workspace: Path
    mcp_watch: McpSessionWatch

    @property
    def busy(self) -> bool:
        """A turn or a /compact run is in progress."""
        ...

    def push_screen(self, screen: Screen[Any], callback: Any = None) -> Any:
        """Show `screen` over the app; `callback` gets its result."""
        ...

    def exit(self, result: int | None = None) -> None:
        """Quit with `result` as the exit code."""
        ...

    def start_compaction(self, instructions: str, notice: NoticeBlock) -> None:
        """Run /compact in the turn worker."""
        ...

    async def new_session(self) -> None:
        """Start a new session with an empty chat."""
        ...

    async def show_settings(self, settings: Settings) -> None:
        """Reflect settings now in use."""
        ...

    async def resume_session(self, session_id: str) -> None:
        """Switch to the saved session `session_id`, its history shown in the chat."""
        ...

    async def send_user_message(self, text: str, model: str = "") -> None:
        """Send `text` as the user's message (a turn, or queued), on `model` when given."""
        ...

    @property
    def prompt(self) -> PromptInput:
        """The input the user types into (/rewind puts the turn's text back in it)."""
        ...

    def refresh_context_gauge(self) -> None:
        """Show the context manager's current view of the prompt size."""
        ...
