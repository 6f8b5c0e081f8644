"""The small protocols the rest of Forge codes against."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from forge.llm.messages import Message
from forge.llm.retry import RetrySink
from forge.llm.stream import Completion, StreamEvent


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may call: name, description and JSON schema of its parameters."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    defer_loading: bool = False
    """Sent but not shown to the model until the provider's own tool search loads it
    (Anthropic's `defer_loading`, docs/adr/0054); the Chat Completions shape ignores it."""

    def to_api(self) -> dict[str, Any]:
        """The tool in Chat Completions wire shape."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@runtime_checkable
class Provider(Protocol):
    """Something that answers chat messages: streaming or whole."""

    @property
    def model(self) -> str:
        """The model name sent with every request."""
        ...

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        required_tool: str | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one reply; the last event is always `StreamFinished`. `required_tool` names
        a tool of `tools` the reply must call (the user asked for it by name); a provider or
        server that cannot force a tool answers as usual."""
        ...

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        on_retry: RetrySink | None = None,
    ) -> Completion:
        """One whole reply; `on_retry` is told of each retry (a `RetryScheduled`, as `stream`
        yields) before the provider waits to ask again."""
        ...


@runtime_checkable
class ModelCloner(Protocol):
    """A provider that can make a cheap copy of itself speaking to another model."""

    def clone_with_model(
        self,
        model: str,
        *,
        request_timeout: float | None = None,
        max_retries: int | None = None,
    ) -> Provider:
        """A copy sharing the HTTP client, key and base URL on `model`; the timeout per request
        (seconds) and the retry count are the original's unless given."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the model's tokenizer would (or a close estimate)."""

    def count_text(self, text: str) -> int:
        """Tokens in a plain string."""
        ...

    def count_message(self, message: Message) -> int:
        """Tokens one message costs in a prompt, including tool calls and framing."""
        ...

    def count_messages(self, messages: Sequence[Message]) -> int:
        """Tokens a list of messages costs in a prompt."""
        ...


@runtime_checkable
class CountsAhead(Protocol):
    """A counter that can count huge messages ahead, off the event loop (docs/adr/0036)."""

    async def count_ahead(self, messages: Sequence[Message]) -> None:
        """Count the messages whose content is huge so later counts are cached."""
        ...
