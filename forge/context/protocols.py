"""The seam between the agent and context management: the agent codes against
`ContextManagerProtocol`; `forge.context.manager.Manager` implements it. A manager is given its
event sink at construction (docs/adr/0039). What a strategy is lives in
`forge.context.strategies.contract`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from forge.context.conversation import Conversation
from forge.context.events import EventSink, Trigger, drop_event
from forge.context.oversize_message import ShortenedMessage
from forge.llm.messages import Message
from forge.llm.protocols import Provider, ToolSpec
from forge.llm.stream import Usage


class ContextManagerProtocol(Protocol):
    """What the agent loop needs from context management."""

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

    def estimated_usage(self, conversation: Conversation, reply: Message) -> Usage | None:
        """Forge's own count of the request just made from `conversation` and its `reply`,
        for a server that reported no usage (None: nothing to count with)."""
        ...

    def fit_user_message(self, message: Message) -> ShortenedMessage | None:
        """The head-and-tail replacement of a user message larger than its share of the
        budget, or None when it fits (`forge.context.oversize_message`)."""
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

    def ledger_text(self) -> str:
        """The work ledger as the prompt shows it once pinned ("" when none; docs/adr/0050)."""
        ...


class NullContextManager:
    """Does no summarization; keeps the seam usable before (or without) real management.
    `emit` is where a subclass sends the context events it makes."""

    def __init__(
        self, provider: Provider, max_tokens: int = 128_000, *, emit: EventSink = drop_event
    ) -> None:
        self._provider = provider
        self._max_tokens = max_tokens
        self._last_prompt_tokens = 0
        self.emit = emit

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

    def estimated_usage(self, conversation: Conversation, reply: Message) -> Usage | None:
        """None: nothing is counted locally."""
        return None

    def fit_user_message(self, message: Message) -> ShortenedMessage | None:
        """None: nothing is counted locally."""
        return None

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

    def ledger_text(self) -> str:
        """No ledger: nothing is compacted."""
        return ""
