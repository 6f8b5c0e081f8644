"""The seams of the context subsystem: what a strategy is, and what the agent needs of the
manager. The agent codes against `ContextManagerProtocol`; `forge.context.manager.Manager`
implements it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from forge.context.conversation import Conversation
from forge.context.events import EventSink, Trigger
from forge.llm.protocols import Provider, ToolSpec


class Strategy(Protocol):
    """One way of shrinking the conversation. Small, ordered, composed by the manager."""

    name: str

    def should_run(self, conversation: Conversation, current_tokens: int, max_tokens: int) -> bool:
        """Whether this strategy's own trigger fires now."""
        ...

    async def summarize(
        self, conversation: Conversation, provider: Provider, events: EventSink
    ) -> int:
        """Summarize in place; returns how many items were summarized."""
        ...


class ContextManagerProtocol(Protocol):
    """What the agent loop needs from context management."""

    event_sink: EventSink | None
    """Where context events go; the agent points it at the running turn."""

    @property
    def max_tokens(self) -> int:
        """The prompt budget in tokens."""
        ...

    def current_tokens(self, conversation: Conversation) -> int:
        """Prompt tokens now: last server-reported prompt tokens plus new messages counted."""
        ...

    def record_usage(self, prompt_tokens: int, conversation: Conversation) -> None:
        """The server reported `prompt_tokens` for the request made from `conversation`."""
        ...

    def set_tools(self, specs: Sequence[ToolSpec]) -> None:
        """The tool definitions sent with every request (counted into the prompt)."""
        ...

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        """Run before every LLM call: warn, run strategies, auto-summarize, fall back."""
        ...

    async def compact(
        self, conversation: Conversation, instructions: str = "", trigger: Trigger = Trigger.MANUAL
    ) -> None:
        """Summarize now regardless of triggers (/compact, or after a context overflow)."""
        ...

    def set_provider(self, provider: Provider) -> None:
        """Use a new main provider (after a settings change)."""
        ...

    def set_summarization_model(self, model: str) -> None:
        """Use this model for summaries from now on ("" = the main model)."""
        ...

    def provider_for_summarization(self) -> Provider:
        """The provider summaries go to: a clone on the summarization model, or the main one."""
        ...


class NullContextManager:
    """Does no summarization; keeps the seam usable before (or without) real management."""

    def __init__(self, provider: Provider, max_tokens: int = 128_000) -> None:
        self._provider = provider
        self._max_tokens = max_tokens
        self._last_prompt_tokens = 0
        self.event_sink: EventSink | None = None

    @property
    def max_tokens(self) -> int:
        """The prompt budget in tokens."""
        return self._max_tokens

    def current_tokens(self, conversation: Conversation) -> int:
        """The last reported prompt size."""
        return self._last_prompt_tokens

    def record_usage(self, prompt_tokens: int, conversation: Conversation) -> None:
        """Remember the reported prompt size."""
        self._last_prompt_tokens = prompt_tokens

    def set_tools(self, specs: Sequence[ToolSpec]) -> None:
        """Ignored: nothing is counted locally."""

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        """Nothing to do."""

    async def compact(
        self, conversation: Conversation, instructions: str = "", trigger: Trigger = Trigger.MANUAL
    ) -> None:
        """Nothing to do."""

    def set_provider(self, provider: Provider) -> None:
        """Use a new main provider."""
        self._provider = provider

    def set_summarization_model(self, model: str) -> None:
        """Ignored: nothing is summarized."""

    def provider_for_summarization(self) -> Provider:
        """The main provider."""
        return self._provider
