"""The status pane's session lines for permission mode and cost (docs/adr/0029).

`ModeView` shows the permission mode (coloured: read-only calm, auto a warning). `CostView`
shows the session's cost so far, split into agent and summarization requests, or "unknown"
for a model the price table does not list, and the prompt-cache reads and writes when the
provider reports writes (Anthropic, docs/adr/0037). Both render what they are given; the pane feeds
them from the running agent (`StatusPane.refresh_session_lines`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

from forge.agent.modes import PermissionMode

if TYPE_CHECKING:
    from collections.abc import Collection

    from forge.agent.costs import CostReport, Kind


def cost_text(report: CostReport | None, unpriced: Collection[str] = ()) -> str:
    """The total, then agent, summarization (and subagent) requests, one per line (short
    enough for the narrow pane); "—" before the session exists. `unpriced` names the kinds ("agent",
    "summarization") whose model the price table does not list: with no request of that kind
    yet, its cost is unknown ("?"), not "$0.00" (as /cost says)."""
    if report is None:
        return "cost   —"

    def spent(kind: Kind) -> str:
        if kind in unpriced and not any(line.kind == kind for line in report.lines):
            return "?"
        return report.shown(kind, unknown="?")

    # "+ ?" where a model has no price: what the priced ones cost still shows.
    agent, summarization = spent("agent"), spent("summarization")
    total = report.shown(unknown="?")
    if "?" in (agent, summarization) and "?" not in total:
        total = f"{total} + ?" if report.lines else "?"
    text = f"cost   {total}\n  agent {agent}\n  summ. {summarization}"
    if report.has_subagents:  # children's requests (docs/adr/0045)
        text += f"\n  sub.  {report.shown('subagent', unknown='?')}"
    read, written = report.cache_tokens()
    if written:  # a provider that reports cache writes (Anthropic): reads and writes
        text += f"\ncache  r {compact_count(read)} w {compact_count(written)}"
    return text


def compact_count(tokens: int) -> str:
    """ "950", "12.3k", "1.2M": a token count short enough for the narrow pane."""
    if tokens < 1_000:
        return str(tokens)
    if tokens < 1_000_000:
        return f"{tokens / 1_000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"


def mode_text(mode: PermissionMode | None) -> str:
    """ "mode   ask" (what each mode lets through is in the toast shown on switching)."""
    return f"mode   {mode.value if mode is not None else '—'}"


class ModeView(Static):
    """The permission mode; a dash-class per mode (`-read-only`, `-auto`, ...)."""

    DEFAULT_CSS = """
    ModeView {
        &.-read-only { color: $text-accent; }
        &.-accept-edits { color: $text-warning; }
        &.-auto { color: $text-error; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(mode_text(None), id=id, markup=False)
        self.mode: PermissionMode | None = None
        self.text = mode_text(None)

    def show(self, mode: PermissionMode | None) -> None:
        """Show `mode`."""
        if mode == self.mode:
            return
        for known in PermissionMode:
            self.set_class(known is mode, f"-{known.value}")
        self.mode = mode
        self.text = mode_text(mode)
        self.update(self.text)


class CostView(Static):
    """The session's cost so far."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cost_text(None), id=id, markup=False)
        self.text = cost_text(None)

    def show(self, report: CostReport | None, unpriced: Collection[str] = ()) -> None:
        """Show `report` (None: no session yet); `unpriced`: see `cost_text`."""
        text = cost_text(report, unpriced)
        if text != self.text:
            self.text = text
            self.update(text)
