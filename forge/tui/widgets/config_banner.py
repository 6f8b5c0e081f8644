"""A config file Forge cannot read, pinned above the chat until it is fixed (issue 18 item 6).

The chat scrolls: at 80x24 a start-up error is gone after a few lines. The banner is docked
above the chat, a few lines at most, and says which file and line to fix; it goes away when a
reload applies the fixed file."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from forge.tui.widgets.formatting import shorten

MESSAGE_WIDTH = 60
"""Characters of the parser's message the banner keeps."""


class ConfigProblemBanner(Static):
    """Hidden until `show_problem`; `clear_problem` hides it again."""

    DEFAULT_CSS = """
    ConfigProblemBanner {
        display: none;
        height: auto;
        max-height: 5;
        padding: 0 1;
        background: $error 25%;
    }
    ConfigProblemBanner.-shown {
        display: block;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.problem = ""
        """The text shown ("" while hidden)."""

    def show_problem(self, where: str, message: str) -> None:
        """Pin "Config file not applied: WHERE: MESSAGE…" above the chat (the message cut to
        a line or so: the chat's welcome has it whole)."""
        message = shorten(message, MESSAGE_WIDTH).rstrip(".")
        tail = (" " if message.endswith("…") else ". ") + "Fix it; it reloads when saved."
        self.problem = f"Config file not applied: {where}: {message}{tail}"
        # Content, not markup: the path and the parser's message are text from outside.
        self.update(
            Content.assemble(("⚠ Config file not applied: ", "bold"), f"{where}: {message}{tail}")
        )
        self.add_class("-shown")

    def clear_problem(self) -> None:
        """The file was fixed (a reload applied it)."""
        self.problem = ""
        self.update("")
        self.remove_class("-shown")
