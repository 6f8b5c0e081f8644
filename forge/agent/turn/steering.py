"""Steering: a message the user sends during a turn, added to that turn (issue 40).

A queued message waits for the turn to end; a steered one is added *now*, at the next safe
point: after the running tool calls have returned (every call of the model's reply answered,
so the message list stays valid) and before the next request. A turn whose model has just
answered goes on for a steered message that arrived meanwhile, so the model always reads it.
It is a user message like any other (kept verbatim, an instruction to the context engine),
marked `steered` in its meta (docs/adr/0057).
"""

from __future__ import annotations

import threading
from collections import deque

from forge.agent.events import SteeringAdded
from forge.context.conversation import Conversation
from forge.llm.messages import Message

STEERED_KEY = "steered"
"""The meta key of a user message added during a turn."""


class Steering:
    """The messages waiting to be steered into the running turn (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[str] = deque()

    @property
    def pending(self) -> bool:
        """Whether a message waits for the next safe point."""
        with self._lock:
            return bool(self._waiting)

    def add(self, text: str) -> None:
        """Send `text` into the running turn at its next safe point."""
        with self._lock:
            self._waiting.append(text)

    def take(self) -> list[str]:
        """Every waiting message, oldest first; none wait afterwards."""
        with self._lock:
            taken = list(self._waiting)
            self._waiting.clear()
        return taken

    def add_to(self, conversation: Conversation) -> list[SteeringAdded]:
        """Append each waiting message to `conversation` as a user message (the safe point);
        one event per message, in order."""
        added: list[SteeringAdded] = []
        for text in self.take():
            message = Message(role="user", content=text, meta={STEERED_KEY: True})
            conversation.append(message)
            added.append(SteeringAdded(message.id, text))
        return added
