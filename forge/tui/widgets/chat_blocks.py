"""The blocks the chat is made of: user messages, answers, tool calls, summaries, notices.

Every block shows text from outside (the user, the model, tools, files, servers), so each
passes it through `terminal_safe` (no control sequence reaches the terminal) and never parses
it as Textual markup (docs/adr/0035).
"""

from __future__ import annotations

import asyncio
from typing import Any, Self

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Size
from textual.markup import escape
from textual.widget import Widget
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownBlock, MarkdownStream

from forge.llm.messages import ToolCall
from forge.session.tool_names import USER_COMMAND_TOOL
from forge.text_safety import TerminalSafeStream, terminal_safe
from forge.tui.widgets.diff_view import DiffView
from forge.tui.widgets.formatting import format_tokens, tool_call_argument_summary

TITLE_CHROME = 6
"""Columns of a tool row that are not its title text: the coloured edge, the collapsible's
padding, the title's padding and its ▶ symbol."""
MIN_ARGUMENT_WIDTH = 16
"""A tool row's argument keeps at least this many columns (the title wraps rather than lose
what was called on)."""
FOLD_DIFF_LINES = 30
"""Diffs longer than this are shown folded in the chat (one keypress opens them)."""
MAX_TOOL_OUTPUT_CHARS = 20_000
"""Tool output kept for display; the tail is kept, as the end of a command's output matters."""


def mark_markdown_edges(markdown: Markdown) -> None:
    """Mark the first and last block of a complete markdown document (`-first-block`,
    `-last-block`), which app.tcss trims the outer spacing of.

    Classes set once replace `:first-child`/`:last-child` rules, which would restyle every
    earlier block each time a streamed answer mounts one more.
    """
    blocks = [child for child in markdown.children if isinstance(child, MarkdownBlock)]
    for index, block in enumerate(blocks):
        block.set_class(index == 0, "-first-block")
        block.set_class(index == len(blocks) - 1, "-last-block")


QUEUED_LABEL = "queued · sent when the running turn ends"
NOT_SENT_LABEL = "not sent · a hook blocked it"
"""The line above a message typed while a turn runs."""


class QuietCollapsible(Collapsible):
    """A Collapsible that Forge can open or close without scrolling the chat to it.

    Textual scrolls a Collapsible into view whenever it opens or closes, which releases the
    chat's anchor: after an edit's diff opened by itself, or the reasoning closed when the
    answer started, the chat stopped following the newest output. `set_collapsed` skips that
    scroll; a toggle by the user (click, Enter) still brings the block into view.
    """

    def __init__(self, *children: Widget, **options: Any) -> None:
        super().__init__(*children, **options)
        self._quiet_toggles = 0

    def set_collapsed(self, collapsed: bool) -> None:
        """Open or close without scrolling the chat."""
        if self.collapsed != collapsed:
            self._quiet_toggles += self.is_mounted
            self.collapsed = collapsed

    def scroll_visible(self, *args: Any, **options: Any) -> None:
        if self._quiet_toggles:
            self._quiet_toggles -= 1
            return
        super().scroll_visible(*args, **options)


class UserMessageBlock(Static):
    """What the user typed. `-queued` (and labelled so) while it waits for the running turn;
    the chat keeps queued blocks below everything the running turn adds."""

    DEFAULT_CLASSES = "chat-block"

    def __init__(self, text: str, *, queued: bool = False) -> None:
        # `classes` would replace DEFAULT_CLASSES, so state classes are added afterwards.
        super().__init__(self._content(text, queued), markup=False)
        self.set_class(queued, "-queued")
        self.text = text
        self.expansion_block: ExpansionBlock | None = None
        """What a `/command` or skill the user typed sent to the model, folded below it."""

    @staticmethod
    def _content(text: str, queued: bool) -> str:
        text = terminal_safe(text)
        return f"{QUEUED_LABEL}\n{text}" if queued else text

    @property
    def queued(self) -> bool:
        """Whether the message still waits for the running turn to end."""
        return self.has_class("-queued")

    def set_queued(self, queued: bool) -> None:
        """Mark the message waiting (labelled "queued") or sent."""
        self.set_class(queued, "-queued")
        self.update(self._content(self.text, queued))

    def set_not_sent(self) -> None:
        """Mark the message kept from the model (a UserPromptSubmit hook blocked it): it is
        not in the conversation, so it must not read as sent."""
        self.set_class(True, "-not-sent")
        self.update(f"{NOT_SENT_LABEL}\n{terminal_safe(self.text)}")


class ExpansionBlock(QuietCollapsible):
    """Under a `/command` or skill the user typed: the text it sent to the model, folded (the
    user's message shows what they typed; docs/adr/0048)."""

    DEFAULT_CLASSES = "chat-block"
    DEFAULT_CSS = """
    ExpansionBlock { color: $text-muted; }
    """

    def __init__(self, expansion: str) -> None:
        text = terminal_safe(expansion)
        lines = text.count("\n") + 1
        title = f"⤷ sent to the model as {lines} line{'s' if lines != 1 else ''}"
        super().__init__(Static(text, markup=False), title=title, collapsed=True)
        self.text = text


class NoticeBlock(Markdown):
    """A message from Forge itself: welcome, help, command results (`-info`) or errors."""

    DEFAULT_CLASSES = "chat-block"

    def __init__(self, markdown: str, *, kind: str = "info") -> None:
        # Notices quote servers, files and commands (errors, names, listings).
        markdown = terminal_safe(markdown)
        super().__init__(markdown)
        self.add_class(f"-{kind}")
        self.kind = kind
        self.text = markdown

    async def set_text(self, markdown: str, *, kind: str | None = None) -> None:
        """Replace the text (and the kind, when given), e.g. when a pending action ends."""
        if kind is not None and kind != self.kind:
            self.remove_class(f"-{self.kind}")
            self.kind = kind
            self.add_class(f"-{kind}")
        self.text = terminal_safe(markdown)
        await self.update(self.text)

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        # Posted when the document has been (re)built.
        mark_markdown_edges(self)


class AssistantBlock(Vertical):
    """One assistant reply: dimmed, collapsible reasoning above the streamed markdown answer."""

    DEFAULT_CLASSES = "chat-block"

    def __init__(self, *, show_reasoning: bool = True) -> None:
        super().__init__()
        self.show_reasoning = show_reasoning
        self.answer_text = ""
        self.reasoning_text = ""
        self._reasoning = Static("", markup=False, classes="reasoning-text")
        self._reasoning_box = QuietCollapsible(
            self._reasoning, title="Thinking…", collapsed=False, classes="reasoning"
        )
        self._reasoning_box.display = False
        self._answer = Markdown("", classes="answer")
        self._stream: MarkdownStream | None = None
        self._answer_safety = TerminalSafeStream()
        self._reasoning_safety = TerminalSafeStream()
        self._recorded = False
        self.built = asyncio.Event()
        """Set once a recorded answer's document is built (`recorded`)."""

    @classmethod
    def recorded(cls, answer: str, reasoning: str = "", *, show_reasoning: bool = True) -> Self:
        """A finished reply from a resumed session, built whole before it is mounted (no
        stream, no awaited update): it looks as the live one did once it was complete."""
        block = cls(show_reasoning=show_reasoning)
        safe = terminal_safe(answer)  # outside text: no control sequence reaches the terminal
        block.answer_text = safe
        block._answer = Markdown(safe, classes="answer")
        block._recorded = True
        if reasoning:
            block._add_reasoning(terminal_safe(reasoning))
            block._reasoning_box.title = "Thought"
            block._reasoning_box.collapsed = bool(answer)  # live: it steps aside for the answer
        return block

    def compose(self) -> ComposeResult:
        yield self._reasoning_box
        yield self._answer

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        # A recorded answer's document has been built (streamed ones are marked in `finish`).
        if self._recorded and event.markdown is self._answer:
            mark_markdown_edges(self._answer)
            self.built.set()

    async def append_answer(self, text: str) -> None:
        """Stream more of the answer (batched by Textual's MarkdownStream)."""
        if self._stream is None:
            self._stream = Markdown.get_stream(self._answer)
            if self.reasoning_text:
                # Once the answer starts, the reasoning steps aside.
                self._reasoning_box.title = "Thought"
                self._reasoning_box.set_collapsed(True)
        text = self._answer_safety.feed(text)
        self.answer_text += text
        if text:
            await self._stream.write(text)

    def append_reasoning(self, text: str) -> None:
        """Show more reasoning, dimmed, if reasoning display is on."""
        self._add_reasoning(self._reasoning_safety.feed(text))

    def _add_reasoning(self, safe_text: str) -> None:
        self.reasoning_text += safe_text
        if not self.show_reasoning or not self.reasoning_text:
            return
        self._reasoning_box.display = True
        self._reasoning.update(self.reasoning_text)

    async def finish(self, final_text: str | None = None) -> None:
        """The reply is complete: flush the stream, and show `final_text` if nothing streamed."""
        if held_reasoning := self._reasoning_safety.flush():
            self._add_reasoning(held_reasoning)
        if self._stream is not None:
            held = self._answer_safety.flush()
            if held:
                self.answer_text += held
                await self._stream.write(held)
            await self._stream.stop()
            self._stream = None
        elif final_text:
            self.answer_text = terminal_safe(final_text)
            await self._answer.update(self.answer_text)
        mark_markdown_edges(self._answer)
        if self.reasoning_text:
            self._reasoning_box.title = "Thought"

    @property
    def is_empty(self) -> bool:
        """True when neither answer nor reasoning arrived (a reply that only called tools)."""
        return not self.answer_text and not self.reasoning_text


class ToolCallBlock(Vertical):
    """One tool call: a compact title (name, key argument, status) over collapsed output.

    Status classes: `-pending` (awaiting approval), `-running`, `-ok`, `-error`, `-rejected`.
    """

    DEFAULT_CLASSES = "chat-block"
    DEFAULT_CSS = """
    ToolCallBlock.-folded {
        background: $surface;
        border-left: outer $primary 40%;
        padding: 0 1;  /* the title where the live row's collapsible draws it */
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
        pointer: pointer;
        &:hover { color: $foreground; }
        &:focus { text-style: $block-cursor-text-style; }
        &.-ok { border-left: outer $success 60%; }
        &.-error { border-left: outer $error; }
        &.-rejected { border-left: outer $error 50%; color: $text-muted; }
    }
    """
    BINDINGS = [Binding("enter", "unfold", "Open", show=False)]
    _ICONS = {"pending": "?", "running": "●", "ok": "✓", "error": "✗", "rejected": "⊘"}

    def __init__(
        self,
        call: ToolCall,
        *,
        folded: bool = False,
        status: str = "running",
        status_text: str = "running",
    ) -> None:
        """`folded`: a finished call from a resumed session (`recorded`), drawn as its title
        line alone — one widget, not five, so a screenful of history mounts at once — until
        it is opened (click or Enter), when it becomes the usual row, open."""
        # `classes` replaces DEFAULT_CLASSES; set once here (each add_class restyles).
        super().__init__(classes=f"chat-block -{status}" + (" -folded" if folded else ""))
        self.folded = folded
        self.can_focus = folded
        self.call = call
        self.status = status
        self.status_text = status_text
        self.output = ""
        self.diff_folded = False
        self._title_width: int | None = None
        """Columns for the title text, once the row has a size (None: not laid out yet)."""
        self._output_safety = TerminalSafeStream()
        # The user's own `!command` shows its output open: they ran it to see it.
        self._collapsed = call.name != USER_COMMAND_TOOL
        self._output_widget: Static | None = None
        self._box_widget: QuietCollapsible | None = None
        self.detail: Widget | None = None
        """Shown above the output once the row opens (a resumed `task` row's child calls)."""

    @classmethod
    def recorded(
        cls, call: ToolCall, status: str, status_text: str, output: str, *, diff: str = ""
    ) -> Self:
        """A finished call of a resumed session, folded, with its recorded outcome; an edit
        with its recorded `diff` is the row the live chat ended on: open on its diff (folded
        with the same note when the diff is long)."""
        block = cls(call, folded=not diff.strip(), status=status, status_text=status_text)
        block.show_output(output)
        if diff.strip():
            block.detail = DiffView(diff)
            block._output.display = False
            block._fold_long_diff(diff)
        return block

    @property
    def _box(self) -> QuietCollapsible:
        """The collapsible row (title over output), built on first use."""
        if self._box_widget is None:
            shown = (self.detail, self._output) if self.detail is not None else (self._output,)
            self._box_widget = QuietCollapsible(
                *shown, title=self._title(), collapsed=self._collapsed
            )
        return self._box_widget

    @property
    def _output(self) -> Static:
        if self._output_widget is None:
            self._output_widget = Static(self.output, markup=False, classes="tool-output")
        return self._output_widget

    def compose(self) -> ComposeResult:
        if not self.folded:
            yield self._box

    def render(self) -> Content:
        # Folded: the title line as the collapsed row shows it; else the children draw.
        return self._folded_line(self.size.width) if self.folded else Content("")

    def _folded_line(self, width: int) -> Content:
        """A folded row's line, its title shortened for a content area `width` cells wide
        (as the open row's title is for the same row), so its height is known at layout."""
        title_width = width + self.styles.gutter.width - TITLE_CHROME if width else None
        return Content(f"▶ {self._plain_title(title_width)}")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.folded:  # no children yet: as tall as its title, wrapped
            # The title for this width, not for the last Resize: a layout that comes before
            # the row's Resize (or none after it) keeps the height it computes here.
            # As Widget does for its own content (RenderStyles serves as the rules map).
            line = self._folded_line(width)
            return line.get_height(self.styles, width) if width else 0  # type: ignore[arg-type]
        return super().get_content_height(container, viewport, width)

    def on_click(self) -> None:
        self.action_unfold()

    def action_unfold(self) -> None:
        """Open a folded row: mount the usual collapsible row, expanded."""
        if not self.folded:
            return
        self.folded = False
        self.can_focus = False
        self.remove_class("-folded")
        self._collapsed = False
        self.mount(self._box)
        self.call_after_refresh(lambda: self._box.query_one("CollapsibleTitle").focus())

    def on_resize(self, event: events.Resize) -> None:
        width = max(0, event.size.width - TITLE_CHROME)
        if width and width != self._title_width:
            self._title_width = width
            if self._box_widget is not None:
                self._box_widget.title = self._title()
            elif self.folded:
                self.refresh(layout=True)

    @property
    def title_text(self) -> str:
        """The row's title as shown (icon, name, key argument, status), without markup."""
        return self._plain_title()

    def _plain_title(self, title_width: int | None = None) -> str:
        """Icon, name, argument and status, terminal-safe; the argument is shortened to the
        row's width (never the status: a rejection's reason or a refusal must stay readable).
        `title_width`: columns for the title (default: the row's, once it has a size)."""
        name = f"{self._ICONS[self.status]} {self.call.name}"
        status = f"· {self.status_text}"
        title_width = self._title_width if title_width is None else title_width
        if title_width is None:
            argument = tool_call_argument_summary(self.call)
        else:
            # What fits on the row's line; at least a stub of it, the title wrapping if need be.
            room = title_width - len(name) - len(status) - 4  # two "  " separators
            if room < MIN_ARGUMENT_WIDTH:
                # The status cannot share the line with a useful argument, so the title wraps
                # anyway: the argument takes the first line, the status the next (two running
                # `task` rows of one agent stay told apart at 80 columns).
                room = title_width - len(name) - 3
            width = min(60, max(room, MIN_ARGUMENT_WIDTH))
            argument = tool_call_argument_summary(self.call, width=width)
        return terminal_safe("  ".join(part for part in (name, argument, status) if part))

    def _title(self) -> str:
        return escape(self._plain_title())  # the collapsible's title is markup

    def set_status(self, status: str, text: str) -> None:
        """Change the status class, icon and the text after the title."""
        self.remove_class(f"-{self.status}")
        self.status = status
        self.status_text = text
        self.add_class(f"-{status}")
        if self._box_widget is not None:
            self._box_widget.title = self._title()
        if self.folded:
            self.refresh(layout=True)

    def append_output(self, text: str) -> None:
        """Add streamed output (keeps the last `MAX_TOOL_OUTPUT_CHARS` characters)."""
        self.show_output(self.output + self._output_safety.feed(text))

    def show_output(self, text: str) -> None:
        """Replace the output shown."""
        text = terminal_safe(text)
        if len(text) > MAX_TOOL_OUTPUT_CHARS:
            text = "…" + text[-MAX_TOOL_OUTPUT_CHARS:]
        self.output = text
        if self._output_widget is not None:
            self._output_widget.update(text)

    async def mount_detail(self, widget: Widget) -> None:
        """Show `widget` in the row's body, above the output (a subagent's tool calls)."""
        await self._box.query_one(Collapsible.Contents).mount(widget, before=self._output)

    async def show_diff(self, diff: str) -> None:
        """Show an edit's diff in colour: expanded, as edits are what a reviewer wants to see,
        unless it is longer than `FOLD_DIFF_LINES` (then folded; Enter on the title opens it)."""
        await self._box.query_one(Collapsible.Contents).mount(DiffView(diff))
        self._output.display = False
        self._fold_long_diff(diff)
        self._box.title = self._title()
        self._box.set_collapsed(self.diff_folded)

    def _fold_long_diff(self, diff: str) -> None:
        """Fold the row when `diff` is longer than `FOLD_DIFF_LINES`, saying so in the title."""
        lines = diff.count("\n") + 1
        self.diff_folded = lines > FOLD_DIFF_LINES
        if self.diff_folded:
            self.status_text += f" · {lines}-line diff folded (Enter opens)"
        self._collapsed = self.diff_folded


class SummaryBlock(Collapsible):
    """A summary that replaced earlier messages: what it replaced, tokens saved, its text."""

    DEFAULT_CLASSES = "chat-block"

    def __init__(
        self, text: str, *, label: str, replaced: int, tokens_saved: int | None = None
    ) -> None:
        saved = f" · saved {format_tokens(tokens_saved)} tokens" if tokens_saved else ""
        title = f"⟲ {label} · replaced {replaced} message{'s' if replaced != 1 else ''}{saved}"
        text = terminal_safe(text)
        super().__init__(Markdown(text), title=escape(terminal_safe(title)), collapsed=True)
        self.text = text
        self.replaced = replaced
        self.tokens_saved = tokens_saved

    def on_markdown_table_of_contents_updated(self, event: Markdown.TableOfContentsUpdated) -> None:
        # Posted when the summary's document has been built.
        mark_markdown_edges(event.markdown)
