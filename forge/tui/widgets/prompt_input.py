"""The prompt: a multi-line input with history and slash-command completion.

Enter sends; Shift+Enter or Ctrl+J inserts a newline (terminals that cannot tell Shift+Enter
from Enter still send Ctrl+J). Up on the first line and Down on the last walk the history.
Tab completes a slash command (and stays in the prompt while one is being typed). PageUp
and PageDown scroll the chat. Typing
`@` opens the file completion list (`FileHints`); while it is open, Up/Down choose, Tab/Enter
complete and Esc closes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static, TextArea

from forge.text_safety import terminal_safe
from forge.tui.command_table import complete_slash_command
from forge.tui.file_completion import FileIndex, completion_for, mention_at
from forge.tui.widgets.file_hints import FileHints

NEWLINE_KEYS = ("shift+enter", "ctrl+j")
FILE_HINT_KEYS = ("tab", "enter", "up", "down", "escape")
MAX_HISTORY = 200
PLACEHOLDERS = (
    "Ask Forge…  (Enter sends · Shift+Enter or Ctrl+J new line · / for commands)",
    "Ask Forge…  (Enter sends · Ctrl+J new line · / for commands)",
    "Ask Forge…  (Enter sends · / for commands)",
    "Ask Forge…",
)
"""The prompt's hint, longest first: the longest that fits the prompt's width is shown (at 80
columns the first was cut mid-phrase)."""
PLACEHOLDER = PLACEHOLDERS[0]


def placeholder_for(width: int) -> str:
    """The longest placeholder that fits in `width` columns (the shortest when none does)."""
    return next((text for text in PLACEHOLDERS if len(text) <= width), PLACEHOLDERS[-1])


class PromptInput(TextArea):
    """The text area the user types into; posts `Submitted` on Enter."""

    @dataclass
    class Submitted(Message):
        """The user pressed Enter on non-empty text."""

        text: str

    @dataclass
    class PageRequested(Message):
        """PageUp or PageDown in the prompt: the chat scrolls by a page (`up` or not)."""

        up: bool

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=PLACEHOLDER,
            id=id,
        )
        self.sent_history: list[str] = []
        self._history_position: int | None = None
        """Index into `history` while browsing it; None when editing a fresh draft."""
        self._draft = ""
        self._completed_at: tuple[int, int] | None = None
        """Where the cursor stood right after a file completion (which ends in a space)."""
        self.take_back_queued: Callable[[], str | None] = lambda: None
        """Up on an empty prompt asks this first: the app hands back the last queued message
        during a turn (forge.tui.steering), else None and Up walks the history."""

    def on_resize(self, event: events.Resize) -> None:
        # One column stays free for the cursor at the end of the line.
        self.placeholder = placeholder_for(self.scrollable_content_region.width - 1)

    async def _on_key(self, event: events.Key) -> None:
        handled = True
        hints = self._file_hints()
        just_completed, self._completed_at = self._completed_at, None
        if (
            event.character == ":"
            and just_completed == self.cursor_location
            and self.document.get_line(just_completed[0])[: just_completed[1]].endswith(" ")
        ):
            # `@notes.txt ` then `:3`: the range belongs to the path just completed.
            row, column = just_completed
            self.replace(":", (row, column - 1), (row, column))
        elif hints is not None and hints.active and event.key in FILE_HINT_KEYS:
            if event.key in ("tab", "enter"):
                self.complete_file(hints.chosen or "")
            elif event.key == "escape":
                hints.dismiss()
            else:
                hints.move(1 if event.key == "down" else -1)
        elif event.key in ("pageup", "pagedown"):
            self.post_message(self.PageRequested(up=event.key == "pageup"))
        elif event.key == "enter":
            self.submit()
        elif event.key in NEWLINE_KEYS:
            self.insert("\n")
        elif (
            event.key == "up"
            and not self.text
            and self._history_position is None
            and (queued := self.take_back_queued()) is not None
        ):
            self._set_text(queued)  # during a turn: the queued message first (issue 40)
        elif event.key == "up" and self.cursor_location[0] == 0 and self.sent_history:
            self._walk_history(-1)
        elif (
            event.key == "down"
            and self._history_position is not None
            and self.cursor_location[0] == self.document.line_count - 1
        ):
            self._walk_history(1)
        elif event.key == "tab" and complete_slash_command(self.text):
            # Consumed even when nothing more can be completed ("/co" could be /compact or
            # /context): moving focus away mid-command would drop what is typed next.
            self.complete_command()
        else:
            handled = False
        if handled:
            # Stop TextArea's own handling (and bindings such as cursor_up) for this key.
            event.stop()
            event.prevent_default()

    def _file_hints(self) -> FileHints | None:
        if self.parent is None:
            return None
        return next(iter(self.parent.query(FileHints)), None)

    def complete_file(self, path: str) -> bool:
        """Replace the mention at the cursor with `@path ` (quoted if it has spaces)."""
        row, column = self.cursor_location
        found = mention_at(self.document.get_line(row), column)
        if found is None or not path:
            return False
        completion = completion_for(path)
        self.replace(completion, (row, found[0]), (row, column))
        self.move_cursor((row, found[0] + len(completion)))
        self._completed_at = self.cursor_location
        return True

    def submit(self) -> None:
        """Send the text (if any), remember it in the history, and clear the prompt."""
        text = self.take_text()
        if text:
            self.post_message(self.Submitted(text))

    def take_text(self) -> str:
        """The text (blank lines around it dropped), remembered in the history; the prompt
        is cleared. "" when there is nothing to send."""
        text = self.text.strip("\n")
        if not text.strip():
            return ""
        if not self.sent_history or self.sent_history[-1] != text:
            self.sent_history.append(text)
            del self.sent_history[:-MAX_HISTORY]
        self._history_position = None
        self._draft = ""
        self.clear()
        return text

    def _walk_history(self, step: int) -> None:
        if self._history_position is None:
            if step > 0:
                return
            self._draft = self.text
            position = len(self.sent_history) - 1
        else:
            position = self._history_position + step
        if position < 0:
            return
        if position >= len(self.sent_history):
            self._history_position = None
            self._set_text(self._draft)
            return
        self._history_position = position
        self._set_text(self.sent_history[position])

    def _set_text(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def complete_command(self) -> bool:
        """Complete a partly typed slash command; True if the text changed."""
        matches = complete_slash_command(self.text)
        if not matches:
            return False
        if len(matches) == 1:
            completion = f"/{matches[0].name} "
        else:
            completion = "/" + _common_prefix([m.name for m in matches])
        if completion == self.text:
            return False
        self._set_text(completion)
        return True


def _common_prefix(words: list[str]) -> str:
    prefix = words[0]
    for word in words[1:]:
        while not word.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


class CommandHints(Static):
    """The slash commands matching what is typed, shown above the prompt."""

    DEFAULT_CSS = """
    CommandHints {
        height: auto;
        max-height: 9;
        padding: 0 1;
        color: $text-muted;
        background: $surface;
        display: none;
        &.-visible { display: block; }
    }
    """

    def show_for(self, text: str) -> None:
        """Show the commands matching `text`, or hide when there are none."""
        matches = complete_slash_command(text)
        self.set_class(bool(matches), "-visible")
        lines = (f"{m.usage:<26} {m.description}" for m in matches)
        self.update(terminal_safe("\n".join(lines)))  # custom commands' text is a file's


class PromptArea(Vertical):
    """The hints and the prompt together; keeps the hints in step with the text."""

    DEFAULT_CSS = """
    PromptArea {
        dock: bottom;
        height: auto;
        PromptInput {
            height: auto;
            min-height: 3;
            max-height: 10;
            border: tall $accent 50%;
            padding: 0 1;
            &:focus { border: tall $accent; }
        }
    }
    """

    def compose(self) -> ComposeResult:
        yield CommandHints(markup=False)
        workspace = getattr(self.app, "workspace", None)
        yield FileHints(FileIndex(workspace) if workspace is not None else None)
        yield PromptInput(id="prompt")

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.query_one(CommandHints).show_for(event.text_area.text)
        self._show_file_hints(event.text_area)

    def on_file_hints_index_built(self, event: FileHints.IndexBuilt) -> None:
        self._show_file_hints(self.query_one(PromptInput))

    def _show_file_hints(self, prompt: TextArea) -> None:
        row, column = prompt.cursor_location
        self.query_one(FileHints).show_for(prompt.document.get_line(row), row, column)
