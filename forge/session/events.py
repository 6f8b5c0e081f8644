"""The one event a Session's turn yields besides the agent's own (forge.agent.events)."""

from __future__ import annotations

from dataclasses import dataclass

from forge.agent.events import AgentEvent


@dataclass(frozen=True)
class AttachmentsAdded:
    """The message's `@` mentions were expanded (before the turn's first agent event): one
    line per attached file (`attached src/app.py (lines 1-40)`) and one per mention that
    attached nothing, saying why (the message was sent without it; docs/adr/0030)."""

    attached: tuple[str, ...]
    problems: tuple[str, ...]


SessionEvent = AgentEvent | AttachmentsAdded
"""What `Session.run_turn` yields."""
