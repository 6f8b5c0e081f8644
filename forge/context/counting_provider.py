"""A provider wrapper that counts the requests made through it (for `llm_calls` in events),
hands each reported usage to `on_usage` (the session's cost ledger, docs/adr/0029) and each
scheduled retry to `on_retry` (the manager's `emit`, docs/adr/0013)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence

from forge.context.usage_estimate import estimated_request_usage
from forge.llm.messages import Message
from forge.llm.protocols import Provider, TokenCounter, ToolSpec
from forge.llm.retry import RetrySink
from forge.llm.stream import Completion, StreamEvent, StreamFinished, Usage, UsageReported

UsageSink = Callable[[str, Usage], None]
"""Called with the model and the usage a request reported."""


class CountingProvider:
    """Delegates to `inner`, counts every `stream` and `complete` call, and reports usage."""

    def __init__(
        self,
        inner: Provider,
        on_usage: UsageSink | None = None,
        *,
        on_retry: RetrySink | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.inner = inner
        self.counter = counter
        """Estimates a request's usage when the server reports none (issue 34)."""
        self.calls = 0
        self.on_usage = on_usage
        self.on_retry = on_retry
        """Told of each retry a `complete` schedules (the manager's `emit`: the summarizer's
        retries reach the client like the agent's own)."""

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
        required_tool: str | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream through the wrapped provider."""
        self.calls += 1
        events = self.inner.stream(
            messages, tools, max_tokens=max_tokens, required_tool=required_tool
        )
        return events if self.on_usage is None else self._reporting(events, messages)

    async def _reporting(
        self, events: AsyncIterator[StreamEvent], messages: Sequence[Message]
    ) -> AsyncIterator[StreamEvent]:
        last: Usage | None = None
        try:
            async for event in events:
                if isinstance(event, UsageReported):
                    last = event.usage  # the last report wins
                elif isinstance(event, StreamFinished) and last is None:
                    last = self._estimate(messages, event.completion)
                yield event
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        if last is not None and self.on_usage is not None:
            self.on_usage(self.inner.model, last)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        on_retry: RetrySink | None = None,
    ) -> Completion:
        """Complete through the wrapped provider."""
        self.calls += 1
        completion = await self.inner.complete(
            messages, tools, max_tokens=max_tokens, on_retry=on_retry or self.on_retry
        )
        usage = completion.usage or self._estimate(messages, completion)
        if usage is not None and self.on_usage is not None:
            self.on_usage(self.inner.model, usage)
        return completion

    def _estimate(self, messages: Sequence[Message], completion: Completion) -> Usage | None:
        """Forge's own count of a request the server reported no usage for (None without a
        counter)."""
        if self.counter is None:
            return None
        return estimated_request_usage(self.counter, messages, completion.message)
