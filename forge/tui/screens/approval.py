"""The tool-approval modal: approve once, approve always for this tool, or reject with a reason.

It is pushed with `push_screen_wait` by a worker that then answers the request's future, so
the agent waits on the future and the UI stays responsive. Esc (like Ctrl+C) does not reject:
it dismisses with None, and the app ends the whole turn (docs/adr/0031): this call and the ones
after it are recorded as cancelled, and the model is not asked again.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from forge.agent.events import ApprovalDecision, ApprovalRequested, ApprovalVerdict
from forge.text_safety import terminal_safe, terminal_visible
from forge.tui.widgets.diff_view import DiffView


def _looks_like_diff(text: str) -> bool:
    return text.startswith(("---", "@@", "diff ")) or "\n@@ " in text


class ApprovalScreen(ModalScreen[ApprovalDecision | None]):
    """Asks whether a tool call may run; dismisses with an `ApprovalDecision`, or None when
    the user ends the turn (Esc)."""

    CSS_PATH = "approval.tcss"
    BINDINGS = [
        Binding("y", "approve_once", "Approve once"),
        Binding("a", "approve_always", "Always for this tool"),
        Binding("n", "reject", "Reject with reason"),
        Binding("escape", "end_turn", "End the turn", show=True),
    ]

    def __init__(self, request: ApprovalRequested) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        # The model wrote the command or edit (and a server named the tool): shown, never obeyed,
        # and whole: a control sequence removed from view would hide characters that run.
        preview = terminal_visible(self.request.preview or self.request.summary)
        is_diff = _looks_like_diff(preview)
        with Vertical(id="approval-dialog"):
            title = f"Allow {terminal_safe(self.request.call.name)}?"
            if self.request.agent:  # a subagent's call: say whose (docs/adr/0045)
                title += f"  (subagent {terminal_safe(self.request.agent)})"
            yield Label(title, id="approval-title", markup=False)
            if self.request.asked_by:
                # A PreToolUse hook asked (in every mode): which one, and why (issue 35).
                reason = self.request.ask_reason.strip() or "(no reason given)"
                yield Static(
                    terminal_safe(f"A hook asks: {reason}\n— {self.request.asked_by}"),
                    id="approval-hook",
                    markup=False,
                )
            if self.request.protected:
                # Why this asks even in accept-edits or when the tool is auto-approved.
                yield Static(
                    f"Protected: {self.request.protected}.", id="approval-protected", markup=False
                )
            if is_diff:
                # A diff needs its one-line summary (which file, how many blocks); a command
                # preview is the command itself, and the summary would only repeat it.
                summary = terminal_visible(self.request.summary)
                yield Static(summary, id="approval-summary", markup=False)
            with VerticalScroll(id="approval-preview"):
                if is_diff:
                    yield DiffView(preview)
                else:
                    yield Static(preview, markup=False, classes="command-preview")
            # Docked at the bottom of the dialog: a long diff scrolls, the choices stay visible.
            with Vertical(id="approval-actions"):
                with Horizontal(id="approval-buttons"):
                    # Content labels: "[y]" written as markup would vanish as a tag.
                    yield Button(Content("Approve once [y]"), id="approve-once", variant="success")
                    if not self.request.protected:  # a protected write is approved one at a time
                        always = "Always for this tool"
                        if self.request.agent:
                            always += f" ({terminal_safe(self.request.agent)} only)"
                        yield Button(
                            Content(f"{always} [a]"),
                            id="approve-always",
                            variant="primary",
                        )
                    yield Button(Content("Reject [n]"), id="reject", variant="error")
                yield Input(
                    placeholder="Why? (Enter rejects; Esc ends the turn)",
                    id="reject-reason",
                )

    def on_mount(self) -> None:
        self.query_one("#approve-once", Button).focus()

    def action_approve_once(self) -> None:
        """Run this call."""
        self.dismiss(ApprovalDecision(ApprovalVerdict.APPROVE_ONCE))

    def action_approve_always(self) -> None:
        """Run this and every later call of this tool in this session (a protected write:
        this one only)."""
        if self.request.protected:
            self.action_approve_once()
            return
        self.dismiss(ApprovalDecision(ApprovalVerdict.APPROVE_ALWAYS))

    def action_reject(self) -> None:
        """Ask for a reason, then reject."""
        self.add_class("-asking-reason")
        self.query_one("#reject-reason", Input).focus()

    def action_end_turn(self) -> None:
        """End the whole turn (Esc), as Esc does while the agent works: nothing of it runs."""
        self.dismiss(None)

    @on(Button.Pressed, "#approve-once")
    def _approve_once_pressed(self) -> None:
        self.action_approve_once()

    @on(Button.Pressed, "#approve-always")
    def _approve_always_pressed(self) -> None:
        self.action_approve_always()

    @on(Button.Pressed, "#reject")
    def _reject_pressed(self) -> None:
        self.action_reject()

    @on(Input.Submitted, "#reject-reason")
    def _reason_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(ApprovalDecision(ApprovalVerdict.REJECT, event.value.strip()))
