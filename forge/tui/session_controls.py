"""The app's permission-mode key and what the status pane shows of mode and cost
(docs/adr/0029). Kept out of `forge.tui.app`, which other features grow too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from forge.agent.modes import MODE_DESCRIPTIONS, PermissionMode, next_mode

if TYPE_CHECKING:
    from forge.agent.costs import CostReport
    from forge.session.core import Session
    from forge.session.sandbox import SandboxState
    from forge.tui.widgets.cost_notice import CostDetails


@dataclass(frozen=True, slots=True)
class SessionState:
    """What the status pane's session lines show."""

    mode: PermissionMode
    cost: CostReport
    unpriced: frozenset[str]
    """The kinds of request ("agent", "summarization") whose model has no price."""
    sandbox: SandboxState | None = None
    """What confines the model's commands (docs/adr/0053)."""


MODE_KEY = "ctrl+t"
"""Cycles the permission mode (Shift+Tab moves focus in Textual; Ctrl+T reaches every
terminal and tmux, and nothing in Forge's widgets uses it)."""


def session_state(session: Session | None) -> SessionState | None:
    """The running agent's permission mode and priced cost, or None before the session."""
    if session is None:
        return None
    from forge.config.prices import price_table

    prices = price_table(session.settings.prices)
    llm = session.settings.llm
    models = (("agent", llm.model), ("summarization", llm.effective_summarization_model))
    unpriced = frozenset(kind for kind, model in models if prices.lookup(model) is None)
    sandbox = session.sandbox.state() if session.sandbox is not None else None
    return SessionState(session.policy.mode, session.reports.cost(), unpriced, sandbox)


def cycle_mode(session: Session) -> str:
    """Switch `session` to the next permission mode; returns the toast that says which."""
    mode = next_mode(session.policy.mode)
    session.set_mode(mode)
    return f"Mode: {mode.value} ({MODE_DESCRIPTIONS[mode]})"


def cost_details(session: Session) -> CostDetails:
    """The `/cost` report, as a table and as one block per model, with the prices it used
    and where they come from."""
    from forge.config.prices import price_table
    from forge.tui.widgets.cost_notice import CostDetails, table_width

    prices = price_table(session.settings.prices)
    report = session.reports.cost()
    models = {line.model for line in report.lines} | {
        session.settings.llm.model,
        session.settings.llm.effective_summarization_model,
    }
    rows = []
    for model in sorted(models):
        price = prices.lookup(model)
        rows.append(
            f"- `{model}`: unknown (not in the price table)"
            if price is None
            else f"- `{model}`: ${price.input:g} in, ${price.cached_input:g} cached, "
            f"${price.cache_write_price:g} cache write, ${price.output:g} out"
        )
    footer = (
        "Prices per million tokens:\n\n" + "\n".join(rows) + "\n\n"
        "Add or correct them under `prices:` in the config file."
    )
    return CostDetails(
        wide=f"{report.details_markdown()}\n\n{footer}",
        narrow=f"{report.details_markdown(narrow=True)}\n\n{footer}",
        table_width=table_width(report),
    )
