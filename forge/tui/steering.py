"""The TUI's side of steering (issue 40, docs/adr/0057): the message that carries a
`SteeringAdded` event to the chat, which shows the steered message where the turn added it."""

from __future__ import annotations

from forge.agent.events import SteeringAdded
from forge.tui.messages import EventMessage


class SteeringShown(EventMessage[SteeringAdded]):
    """A message the user steered into the running turn was added to the conversation."""
