"""Typed events a provider yields while streaming, and the whole-message result.

This is the lowest layer that emits them, so each is defined here once (docs/adr/0013): the
agent forwards `MessageDelta`, `ReasoningDelta` and `RetryScheduled` to its clients as they
are (`ClientStreamEvent`), and turns `StreamFinished` into its own turn-level events.
"""

from __future__ import annotations

from dataclasses import dataclass

from forge.llm.messages import Message, ToolCall


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage the server reported for one request."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens read from the provider's prompt cache."""
    reasoning_tokens: int = 0
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's prompt cache (Anthropic's
    `cache_creation_input_tokens`; priced apart from reads and plain input). Part of
    `prompt_tokens`, like `cached_tokens`."""
    estimated: bool = False
    """True when the server reported no usage (or one that failed validation) and these are
    Forge's own counts of the request and the reply (`forge.context.usage_estimate`): priced
    the same, marked "estimated" wherever a cost is shown."""


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """A piece of the assistant's visible (streamed) answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's streamed reasoning (reasoning_content / reasoning / thinking)."""

    text: str


@dataclass(frozen=True, slots=True)
class RetryScheduled:
    """The request failed with a retryable error and will be sent again after `delay` seconds.

    Yielded before the provider sleeps, and only while nothing of the reply was yielded (a
    retry never repeats visible output). Carries what the server said, with the key masked.
    """

    attempt: int
    """Which retry this is: 1 for the first."""
    max_attempts: int
    """The most retries the provider makes (`llm.max_retries`)."""
    delay: float
    """Seconds until the request is sent again."""
    error_kind: str
    """The error's stable name, as an `ErrorEvent.kind`: "server_error", "rate_limited",
    "transport", "stream_error" (`forge.llm.errors.kind_of`)."""
    message: str
    """The error's message (the server's words, key masked)."""
    status_code: int | None
    """The HTTP status, when the server answered with one (429, 503, …)."""
    model: str
    """The model the request was for (the agent's, or the summarizer's)."""


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call as it streams in; `index` identifies the call."""

    index: int
    id: str | None
    name: str | None
    arguments_delta: str


@dataclass(frozen=True, slots=True)
class ToolCallComplete:
    """A tool call whose arguments have fully arrived."""

    index: int
    call: ToolCall


@dataclass(frozen=True, slots=True)
class UsageReported:
    """The server reported usage (may arrive more than once; the last one wins)."""

    usage: Usage


@dataclass(frozen=True, slots=True)
class Completion:
    """A whole assistant message with what the server said about it."""

    message: Message
    usage: Usage | None
    finish_reason: str | None
    model: str


@dataclass(frozen=True, slots=True)
class StreamFinished:
    """The stream ended; carries the assembled message. Always the last event."""

    completion: Completion


StreamEvent = (
    MessageDelta
    | ReasoningDelta
    | RetryScheduled
    | ToolCallDelta
    | ToolCallComplete
    | UsageReported
    | StreamFinished
)
"""Everything `Provider.stream` yields."""

ClientStreamEvent = MessageDelta | ReasoningDelta | RetryScheduled
"""The stream events a client (TUI, `forge run`) receives, forwarded by the agent as they are."""
