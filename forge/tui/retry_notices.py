"""Make the provider's retries visible: "retrying in 4 s (HTTP 500)…" instead of a silent wait.

The provider yields a `RetryScheduled` event into its stream before it waits, and the agent
forwards it like any event (docs/adr/0013); the dispatcher (`event_dispatch.route_of`) posts it
as a `RetryScheduledShown` to the app, which shows one line per turn in the chat, updated in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from forge.agent.events import RetryScheduled
from forge.session.notice_lines import describe_retry


@dataclass
class RetryScheduledShown(Message):
    """The provider will ask the server again after `retry.delay` seconds."""

    retry: RetryScheduled
    summarizer: bool = False
    """The retry is of a summarization run's request (the summarizer's model), not the
    agent's."""

    def who(self) -> str:
        """Whose request it is: "Model `m`" (the agent's) or "Summarizer (`m`)"."""
        model = self.retry.model
        return f"Summarizer (`{model}`)" if self.summarizer else f"Model `{model}`"

    def describe(self) -> str:
        """ "retrying in 4 s (HTTP 500, retry 1 of 4)"."""
        return describe_retry(self.retry)
