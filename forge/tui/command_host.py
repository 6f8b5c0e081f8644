"""What the slash-command handlers (`forge.tui.commands`, `forge.tui.checkpoint_commands`)
need of the app, as a Protocol of its own: neither handler module imports the app nor the other
(no import cycle inside `forge.tui`); `ForgeApp` provides it.

A command reads through these members and shows its own lines in the chat. A flow that belongs
to the app (a new or resumed session, a /compact run, a message sent, a model switch, the
settings overlay, /trust, a rewound conversation, quitting) is asked for with a message from
`forge.tui.messages` (`NewSessionRequested`, `CompactionRequested`, …) posted to the app, which
handles it with `@on` (docs/adr/0041's addendum).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import Screen

    from forge.config.settings import Settings
    from forge.session.core import Session
    from forge.tui.widgets.chat import ChatView
    from forge.tui.widgets.status import StatusPane


class CommandHost(Protocol):
    """What the command handlers need of the app (`ForgeApp` provides it)."""

    chat: ChatView
    """Where a command says what it did."""
    status: StatusPane
    """/context reads the recent compactions the status pane remembers."""

    @property
    def session(self) -> Session:
        """The session the commands ask and act on (its verbs, views and roles)."""
        ...

    @property
    def settings(self) -> Settings:
        """The settings in use (/model's current model, custom commands' file limit)."""
        ...

    workspace: Path
    """Where custom commands and saved sessions are found."""

    @property
    def busy(self) -> bool:
        """A turn or a /compact run is in progress (commands that change the session wait)."""
        ...

    def push_screen(self, screen: Screen[Any], callback: Any = None) -> Any:
        """Show `screen` over the app; `callback` gets its result (/help, /rewind, /undo's
        conflict question)."""
        ...

    def copy_to_clipboard(self, text: str) -> None:
        """Put `text` on the terminal's clipboard (OSC 52; /copy)."""
        ...

    def notify(self, message: str, *, markup: bool = True, timeout: float | None = None) -> None:
        """A toast (terminal-safe: `ForgeApp.notify`)."""
        ...

    def post_message(self, message: Message) -> bool:
        """Ask the app for one of its flows (a message of `forge.tui.messages`)."""
        ...
