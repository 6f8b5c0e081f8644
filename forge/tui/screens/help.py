"""The help screen: slash commands and key bindings."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from forge.text_safety import terminal_safe
from forge.tui.command_table import all_commands

KEYS = (
    ("Enter", "send the message (queued if a turn is running)"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Up / Down", "previous / next message from history"),
    ("PageUp / PageDown", "scroll the chat"),
    ("Ctrl+G", "edit the prompt in $VISUAL / $EDITOR"),
    ("Ctrl+C over a selection", "copy the text selected with the mouse"),
    ("Tab", "complete a slash command; elsewhere, move focus (e.g. to a tool call)"),
    ("Esc, Ctrl+C", "interrupt the running turn (Ctrl+C clears a typed draft first)"),
    ("Ctrl+C twice", "quit"),
    ("Ctrl+P", "command palette"),
    ("F2 (or Ctrl+, where the terminal sends it)", "settings"),
    ("F1", "this help"),
    ("F3", "hide / show the status pane"),
    ("Ctrl+T", "next permission mode: read-only, ask, accept-edits, auto"),
)


def help_markdown() -> str:
    """The help text: every slash command (custom ones too) and key binding."""
    commands = "\n".join(f"| `{_cell(c.usage)}` | {_cell(c.description)} |" for c in all_commands())
    keys = "\n".join(f"| {key} | {action} |" for key, action in KEYS)
    return (
        "# Forge help\n\n"
        "| Command | What it does |\n|---|---|\n"
        f"{commands}\n\n"
        "| Key | What it does |\n|---|---|\n"
        f"{keys}\n\n"
        "Start a message with `//` to send text that begins with `/`.\n\n"
        '`@path` attaches a file to the message (`@path:40-80` some lines, `@"a b.txt"` a '
        "path with spaces); typing `@` lists the workspace's files (Up/Down choose, Tab or "
        "Enter completes, Esc closes). `!command` runs a shell command in the workspace "
        "without the model (Esc stops it)."
    )


def _cell(text: str) -> str:
    """`text` inside a table cell: a "|" (as in `[list|enable|disable]`) would end the cell."""
    return text.replace("|", "\\|")


class HelpScreen(ModalScreen[None]):
    """Lists commands and keys; Esc, q or F1 closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS = [Binding("escape,q,f1", "dismiss_help", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Markdown(terminal_safe(help_markdown()))  # descriptions are files' text

    def action_dismiss_help(self) -> None:
        """Close the help."""
        self.dismiss(None)
