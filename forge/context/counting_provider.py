"""A provider wrapper that counts the requests made through it (for `llm_calls` in events)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from forge.llm.messages import Message
from forge.llm.protocols import Provider, ToolSpec
from forge.llm.stream import Completion, StreamEvent


class CountingProvider:
    """Delegates to `inner` and counts every `stream` and `complete` call."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def model(self) -> str:
        """The wrapped provider's model."""
        return self.inner.model

    def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream through the wrapped provider."""
        self.calls += 1
        return self.inner.stream(messages, tools, max_tokens=max_tokens)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
    ) -> Completion:
        """Complete through the wrapped provider."""
        self.calls += 1
        return await self.inner.complete(messages, tools, max_tokens=max_tokens)
