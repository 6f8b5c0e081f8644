"""The one-line header: the session's name (and parent, for a fork), workspace, model, and
the summarization model."""

from __future__ import annotations

from textual import on
from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget

from forge.text_safety import terminal_safe
from forge.tui.messages import SummarizerDisabledShown

MIN_WORKSPACE_CHARACTERS = 8
"""The workspace's path is shortened to fit, never below this many characters (then cut)."""


class ForgeHeader(Widget):
    """Shows where Forge works and which models it talks to; updates on every reload."""

    DEFAULT_CSS = """
    ForgeHeader {
        dock: top;
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    workspace: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    summarization_model: reactive[str] = reactive("")
    """Empty means summaries use the main model."""
    session_label: reactive[str] = reactive("")
    """The session's name and, for a fork, its parent ("" for an unnamed session)."""
    summaries_off: reactive[str] = reactive("")
    """The summarization model a permanent error turned off for the session ("" while on; a
    settings change re-arms it)."""

    def __init__(
        self, workspace: str, model: str, summarization_model: str, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.set_reactive(ForgeHeader.workspace, workspace)
        self.set_reactive(ForgeHeader.model, model)
        self.set_reactive(ForgeHeader.summarization_model, summarization_model)

    @on(SummarizerDisabledShown)
    def _summaries_turned_off(self, message: SummarizerDisabledShown) -> None:
        self.summaries_off = message.event.model

    def show_models(self, model: str, summarization_model: str) -> None:
        """Show new models (after /model, /settings or an external config edit)."""
        self.model = model
        self.summarization_model = summarization_model
        self.summaries_off = ""  # a settings change re-arms the summarizer (ADR 0024)

    def show_session(self, name: str, forked_from: str) -> None:
        """Show the session's name and the session it was forked from (either may be "")."""
        parent = f"fork of {forked_from}" if forked_from else ""
        self.session_label = " · ".join(part for part in (name, parent) if part)

    @property
    def summarization_label(self) -> str:
        """What the header says about the summarization model."""
        if self.summaries_off:
            return f"off ({self.summaries_off} failed)"
        return self.summarization_model.strip() or "same as model"

    def render(self) -> RenderResult:
        workspace = terminal_safe(self.workspace)  # a directory name is anyone's
        summaries: str | None = self.summarization_label
        room = self.content_size.width
        line = self._line(workspace, summaries)
        if room and line.cell_length > room and not self.summarization_model.strip():
            # Too wide (80 columns, a long path or model name): the default goes first...
            if not self.summaries_off:
                summaries = None
            line = self._line(workspace, summaries)
        over = line.cell_length - room if room else 0
        if over > 0:
            # ...then the start of the workspace's path, so both models stay whole.
            keep = max(MIN_WORKSPACE_CHARACTERS, len(workspace) - over - 1)
            if keep < len(workspace):
                line = self._line("…" + workspace[-keep:], summaries)
        return line

    def _line(self, workspace: str, summaries: str | None) -> Content:
        parts: list[str | tuple[str, str]] = [
            ("forge", "bold $accent"),
            "  ",
        ]
        if self.session_label:
            parts += [(terminal_safe(self.session_label), "bold"), "  │  "]
        parts += [
            (workspace, "$text-muted"),
            "  │  model ",
            (terminal_safe(self.model), "bold"),
        ]
        if summaries is not None:
            parts += ["  │  summaries ", (summaries, self._label_style)]
        return Content.assemble(*parts)

    @property
    def _label_style(self) -> str:
        if self.summaries_off:
            return "bold $text-warning"
        return "bold" if self.summarization_model.strip() else "italic"
