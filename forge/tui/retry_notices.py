"""Make the provider's retries visible: "retrying in 4 s (HTTP 500)…" instead of a silent wait.

The provider logs each retry it schedules (with `retry_delay` and `retry_number` on the
record) and knows nothing of the UI. `RetryWatcher` is a logging handler on that logger that
turns such a record into a `RetryScheduled` message for the app.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.message import Message

PROVIDER_LOGGER = "forge.llm.openai_provider"
"""The logger the provider reports its retries on."""

_READABLE_ERRORS = {
    "TransportError": "the server could not be reached",
    "RateLimitError": "rate-limited",
    "ServerError": "server error",
    "StreamError": "the stream broke off",
    "MalformedStreamError": "the stream was garbled",
}


@dataclass
class RetryScheduled(Message):
    """The provider will ask the server again after `delay` seconds."""

    delay: float
    number: int
    """Which retry this is (1 for the first)."""
    max_retries: int
    reason: str
    """Why, in a few words: "HTTP 500", "the server could not be reached"."""
    model: str

    def describe(self) -> str:
        """ "retrying in 4 s (HTTP 500, retry 1 of 4)"."""
        seconds = f"{self.delay:.0f}" if self.delay >= 1 else f"{self.delay:.1f}"
        return f"retrying in {seconds} s ({self.reason}, retry {self.number} of {self.max_retries})"


def retry_from_record(record: logging.LogRecord) -> RetryScheduled | None:
    """The retry a provider log record announces, or None for any other record."""
    delay = getattr(record, "retry_delay", None)
    args = record.args if isinstance(record.args, tuple) else ()
    if not isinstance(delay, int | float) or len(args) < 7:
        return None
    error_name, _base_url, model, number, max_retries, _delay, message = args[:7]
    status = re.search(r"\b(?:HTTP )?([45]\d\d)\b", str(message))
    if status:
        reason = f"HTTP {status.group(1)}"
    else:
        reason = _READABLE_ERRORS.get(str(error_name), str(error_name))
    return RetryScheduled(float(delay), int(str(number)), int(str(max_retries)), reason, str(model))


class RetryWatcher(logging.Handler):
    """Posts a `RetryScheduled` to `app` for each retry the provider schedules."""

    def __init__(self, app: App[Any]) -> None:
        super().__init__(level=logging.INFO)
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        """Post the retry the record announces (other records are ignored)."""
        retry = retry_from_record(record)
        if retry is not None:
            self.app.post_message(retry)

    def install(self) -> None:
        """Listen on the provider's logger (letting its INFO records through)."""
        logger = logging.getLogger(PROVIDER_LOGGER)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
        logger.addHandler(self)

    def uninstall(self) -> None:
        """Stop listening."""
        logging.getLogger(PROVIDER_LOGGER).removeHandler(self)
