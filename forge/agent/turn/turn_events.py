"""The one road context events take to a client: the agent's `TurnEvents` (docs/adr/0039).

The context manager is given `TurnEvents.emit` at its construction and keeps it for its life;
the agent attaches the running turn's (or /compact's) event pump while that runs. An event
emitted while nothing is attached (between turns, or by work that outlived its turn) is logged
and dropped: nobody is there to show it, and nothing breaks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from forge.context.events import EventSink, ManagerEvent

logger = logging.getLogger(__name__)


class TurnEvents:
    """Forwards context events (and the summarizer's retries) to the pump of the turn running
    now."""

    def __init__(self) -> None:
        self._sink: EventSink | None = None

    def emit(self, event: ManagerEvent) -> None:
        """The manager's event sink: to the running turn's client, else logged and dropped.
        Never blocks."""
        if self._sink is not None:
            self._sink(event)
        else:
            logger.debug("context event outside a turn dropped: %s", type(event).__name__)

    @contextmanager
    def attached(self, sink: EventSink) -> Iterator[None]:
        """Send events to `sink` (the turn's event pump) while the block runs (one turn or
        compaction), then to what was attached before."""
        previous, self._sink = self._sink, sink
        try:
            yield
        finally:
            if self._sink is sink:
                self._sink = previous
