"""Make the provider's retries visible: "retrying in 4 s (HTTP 500)…" instead of a silent wait.

The provider yields a `RetryScheduled` event into its stream before it waits, and the agent
forwards it like any event (docs/adr/0013); the dispatcher (`event_dispatch.ROUTES`) posts it
as a `RetryNotice` to the app, which shows one line per turn in the chat, updated in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from forge.agent.events import RetryScheduled

_READABLE_KINDS = {
    "transport": "the server could not be reached",
    "rate_limited": "rate-limited",
    "server_error": "server error",
    "stream_error": "the stream broke off",
    "malformed_stream": "the stream was garbled",
}


def retry_reason(retry: RetryScheduled) -> str:
    """Why, in a few words: "HTTP 500", "the server could not be reached"."""
    if retry.status_code is not None and 400 <= retry.status_code < 600:
        return f"HTTP {retry.status_code}"
    return _READABLE_KINDS.get(retry.error_kind, retry.error_kind)


def describe_retry(retry: RetryScheduled) -> str:
    """ "retrying in 4 s (HTTP 500, retry 1 of 4)"."""
    seconds = f"{retry.delay:.0f}" if retry.delay >= 1 else f"{retry.delay:.1f}"
    return (
        f"retrying in {seconds} s ({retry_reason(retry)}, "
        f"retry {retry.attempt} of {retry.max_attempts})"
    )


@dataclass
class RetryNotice(Message):
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
