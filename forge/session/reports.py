"""What a Session shows of itself: the context report behind `/context` and the gauge."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from forge.llm.messages import Message


@dataclass(frozen=True)
class ContextReport:
    """The prompt as the context manager sees it now, and the session's token totals."""

    messages: Sequence[Message]
    """The conversation (read-only: a front end shows it, never changes it)."""
    current_tokens: int
    """The prompt's size the next request would have (messages and tool definitions)."""
    max_tokens: int
    """The budget the context manager keeps the prompt under."""
    tool_tokens: int
    """What the tool definitions add to every request."""
    window: str
    """The model's context window and where it came from ("" when unknown)."""
    prompt_tokens: int
    """Prompt tokens the agent's requests sent this session (a resumed one's included)."""
    completion_tokens: int
    """Completion tokens the agent's requests received this session."""
    ledger: str = ""
    """The work ledger as the prompt shows it once pinned ("" while the session did nothing
    a ledger records; docs/adr/0050)."""
