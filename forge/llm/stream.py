"""Typed events a provider yields while streaming, and the whole-message result."""

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


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the assistant's visible answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (reasoning_content / reasoning)."""

    text: str


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
    TextDelta | ReasoningDelta | ToolCallDelta | ToolCallComplete | UsageReported | StreamFinished
)
