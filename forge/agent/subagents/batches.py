"""How the agent loop walks a reply's tool calls: one call at a time, except that consecutive
`task` calls form one batch whose children run at the same time (docs/adr/0045).

The loop imports only this module of the package (the runner builds child `Agent`s, so it
cannot be imported by the loop without a cycle): `call_batches` and the `TaskRunner` protocol
the runner (`forge.agent.subagents.run.Subagents`) fulfils.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from typing import Protocol

from forge.agent.costs import CostLedger
from forge.agent.events import AgentEvent
from forge.agent.subagents.definitions import TASK_TOOL
from forge.agent.turn.circuit_breaker import CircuitBreaker
from forge.agent.turn.event_pump import EventPump
from forge.agent.turn.tool_calls import ToolCallHost
from forge.agent.turn.turn_state import TurnState
from forge.context.protocols import ContextManagerProtocol
from forge.llm.messages import ToolCall


class TaskHost(ToolCallHost, Protocol):
    """What running children needs of the parent agent (the `Agent` provides all of it)."""

    @property
    def costs(self) -> CostLedger:
        """The parent's ledger: every child request is counted there too, per agent."""
        ...

    @property
    def stop_check(self) -> Callable[[], str | None] | None:
        """The run's limit (`--max-budget-usd`), asked before each child request too."""
        ...

    @property
    def context_manager(self) -> ContextManagerProtocol:
        """The parent's context manager: its work ledger goes into a brief that asks for it."""
        ...


class TaskRunner(Protocol):
    """Runs a batch of `task` calls (the parent's loop hands it every such batch)."""

    def run_tasks(
        self,
        host: TaskHost,
        calls: Sequence[ToolCall],
        turn: TurnState,
        pump: EventPump[AgentEvent],
        breaker: CircuitBreaker,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run the children, yield their events, append each call's result in call order."""
        ...


def call_batches(
    calls: Sequence[ToolCall], *, tasks: bool
) -> Iterator[tuple[int, Sequence[ToolCall]]]:
    """(index of the first call, the calls) for each step: a run of consecutive `task` calls
    when `tasks` (a runner is wired), else one call."""
    index = 0
    while index < len(calls):
        end = index + 1
        if tasks and calls[index].name == TASK_TOOL:
            while end < len(calls) and calls[end].name == TASK_TOOL:
                end += 1
        yield index, calls[index:end]
        index = end


def is_task_batch(batch: Sequence[ToolCall], *, tasks: bool) -> bool:
    """Whether `batch` is `task` calls for the runner."""
    return tasks and bool(batch) and batch[0].name == TASK_TOOL
