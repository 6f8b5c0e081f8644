"""The state of one running turn, kept where the loop's cleanup can reach it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from forge.agent.events import TurnFinished
from forge.llm.protocols import Provider


@dataclass
class TurnState:
    """What an unfinished turn holds that a cancellation must not lose, and how it ended."""

    partial_text: list[str] = field(default_factory=list)
    partial_reasoning: list[str] = field(default_factory=list)
    waiting_on: asyncio.Future[Any] | None = None
    running_call: str | None = None
    """The id of the call whose tool is executing now (an interruption cuts it off midway)."""
    finished: TurnFinished | None = None
    """Set by a tool call that ends the turn (a loop-breaking tool, the circuit breaker)."""
    settled: bool = False
    interrupted: bool = False
    """The consumer stopped the turn (the user pressed Esc or Ctrl+C)."""
    provider: Provider | None = None
    """The provider this turn's LLM calls go to when it is not the session's (a custom
    command's model); given to `Agent.run_turn`, gone with the turn."""
    required_tool: str | None = None
    """A tool the turn's first reply must call (`@agent-NAME` forces `task`); cleared once
    that request is sent."""

    def clear_partial(self) -> None:
        """Forget the streamed text (it was appended, or will be streamed again)."""
        self.partial_text.clear()
        self.partial_reasoning.clear()
