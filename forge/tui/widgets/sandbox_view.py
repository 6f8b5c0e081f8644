"""The status pane's sandbox line (docs/adr/0053): whether the model's commands run
confined — "sandbox on · no net", "sandbox on · net", or, in the warning colour, "sandbox
OFF" (turned off) or "sandbox none" (nothing can confine them here; `/sandbox` says why).
Below 32 rows only the warning shows (app.tcss), like the cost's split."""

from __future__ import annotations

from textual.widgets import Static

from forge.session.sandbox import SandboxState


def sandbox_text(state: SandboxState | None) -> str:
    """The line for `state` (None: no session yet)."""
    if state is None:
        return "sandbox —"
    if state.enabled:
        return f"sandbox on · {'net' if state.network else 'no net'}"
    if state.refuses:
        return "sandbox none · refused"
    return "sandbox OFF" if state.mode == "off" else "sandbox none"


class SandboxView(Static):
    """The sandbox line; `-unconfined` when the model's commands run unconfined."""

    DEFAULT_CSS = """
    SandboxView {
        &.-unconfined { color: $text-warning; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(sandbox_text(None), id=id, markup=False)
        self.text = sandbox_text(None)

    def show(self, state: SandboxState | None) -> None:
        """Show `state`."""
        text = sandbox_text(state)
        self.set_class(state is not None and not state.enabled, "-unconfined")
        if text != self.text:
            self.text = text
            self.update(text)
