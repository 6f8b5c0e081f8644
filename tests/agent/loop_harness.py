"""Helpers for driving a real `Agent` against the loopback server in tests.

Everything here is real: the OpenAI-compatible provider over HTTP, the default tool registry
working in a temp workspace, the approval policy. `drive` plays the client: it consumes a
turn's events and answers approval requests and questions the way a test scripts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from forge.agent.approvals import ApprovalPolicy
from forge.agent.events import (
    AgentEvent,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalVerdict,
    QuestionAsked,
    SummarizationCompleted,
    SummarizationStarted,
    Trigger,
    TurnFinished,
)
from forge.agent.parts import AgentParts
from forge.agent.tools.registry import default_registry
from forge.agent.turn.loop import Agent
from forge.agent.turn.turn_events import TurnEvents
from forge.context.conversation import Conversation
from forge.context.events import EventSink, drop_event
from forge.context.protocols import ContextManagerProtocol, NullContextManager
from forge.llm.messages import Message, MessageKind
from forge.llm.openai_provider import OpenAICompatibleProvider
from tests.support.openai_server import OpenAIServer

EventT = TypeVar("EventT")

TEST_KEY = "sk-test-loop-0123456789abcdef"

Approver = Callable[[ApprovalRequested], ApprovalDecision]


def approve_once(request: ApprovalRequested) -> ApprovalDecision:
    """Approve this one call."""
    return ApprovalDecision(ApprovalVerdict.APPROVE_ONCE)


def make_provider(server: OpenAIServer, model: str = "test-model") -> OpenAICompatibleProvider:
    """A real provider on the loopback server, without retry delays."""
    return OpenAICompatibleProvider(
        model, server.base_url, TEST_KEY, timeout=30, max_retries=0, backoff_base=0.0
    )


def make_agent(
    provider: OpenAICompatibleProvider,
    workspace: Path,
    *,
    context_manager: ContextManagerProtocol | None = None,
    policy: ApprovalPolicy | None = None,
    conversation: Conversation | None = None,
    max_llm_calls: int = 50,
    ask_user: bool = True,
    turn_events: TurnEvents | None = None,
) -> Agent:
    """An agent with the default tools and the default approval policy (reads auto-approved).
    `turn_events` is the router the context manager was built with (see `with_manager`)."""
    parts = AgentParts(
        provider,
        context_manager or NullContextManager(provider),
        policy or ApprovalPolicy(auto_approve=("read_file", "list_files", "search_files")),
        command_timeout=30,
    )
    return Agent(
        parts,
        default_registry(),
        workspace,
        system_prompt="You are a test agent.",
        conversation=conversation,
        max_llm_calls=max_llm_calls,
        ask_user=ask_user,
        turn_events=turn_events,
    )


ManagerT = TypeVar("ManagerT", bound=ContextManagerProtocol)


def with_manager(
    provider: OpenAICompatibleProvider,
    workspace: Path,
    build: Callable[[EventSink], ManagerT],
    **options: Any,
) -> tuple[Agent, ManagerT]:
    """An agent (see `make_agent`) and its context manager, built as the runtime builds them:
    the agent's event router first, the manager given its `emit`."""
    road = TurnEvents()
    manager = build(road.emit)
    agent = make_agent(provider, workspace, context_manager=manager, turn_events=road, **options)
    return agent, manager


async def drive(
    events: AsyncIterator[AgentEvent],
    *,
    approve: Approver = approve_once,
    answer: Callable[[QuestionAsked], str] = lambda question: "yes",
) -> list[AgentEvent]:
    """Consume a turn (or compaction) to its end, answering what it asks; returns every event."""
    seen: list[AgentEvent] = []
    async for event in events:
        seen.append(event)
        if isinstance(event, ApprovalRequested):
            event.future.set_result(approve(event))
        elif isinstance(event, QuestionAsked):
            event.future.set_result(answer(event))
    return seen


async def consume_until(
    events: AsyncIterator[AgentEvent], stop: Callable[[AgentEvent], bool]
) -> tuple[asyncio.Task[list[AgentEvent]], asyncio.Event, list[AgentEvent]]:
    """Consume in a task, without answering anything; `reached` is set when `stop(event)`.

    Returns the task (to cancel), the event, and the list of events seen so far.
    """
    seen: list[AgentEvent] = []
    reached = asyncio.Event()

    async def consume() -> list[AgentEvent]:
        async for event in events:
            seen.append(event)
            if stop(event):
                reached.set()
        return seen

    return asyncio.create_task(consume()), reached, seen


def finished(events: Sequence[AgentEvent]) -> TurnFinished:
    """The turn's last event, which must be TurnFinished."""
    last = events[-1]
    assert isinstance(last, TurnFinished), f"turn did not finish: {last!r}"
    return last


def of_type(events: Sequence[AgentEvent], kind: type[EventT]) -> list[EventT]:
    """The events of one type, in order."""
    return [event for event in events if isinstance(event, kind)]


class KeepLastTurnContextManager(NullContextManager):
    """A small, real context manager: `compact` replaces everything between the system prompt
    and the latest user message with one summary message (no LLM), emitting the same
    started/completed events the real manager does. Used where a test needs compaction to
    visibly happen without scripting a summarizer."""

    def __init__(self, provider: OpenAICompatibleProvider, *, emit: EventSink = drop_event) -> None:
        super().__init__(provider, emit=emit)
        self.compactions: list[Trigger] = []
        self.evaluations = 0

    async def evaluate_and_summarize(self, conversation: Conversation) -> None:
        """Count the call; summarize nothing."""
        self.evaluations += 1

    async def compact(
        self, conversation: Conversation, instructions: str = "", trigger: Trigger = Trigger.MANUAL
    ) -> None:
        """Replace the older messages with one summary."""
        self.compactions.append(trigger)
        sink = self.emit
        latest_user = conversation.latest_user_index() or 1
        removed = conversation.messages[1:latest_user]
        sink(SummarizationStarted("run-1", "keep_last_turn", trigger, "none", 0, 0, len(removed)))
        await asyncio.sleep(0)
        if removed:
            summary = Message(
                role="user",
                content=f"[summary of {len(removed)} messages]",
                kind=MessageKind.SUMMARY,
                replaces=tuple(message.id for message in removed),
            )
            conversation.replace_range(1, latest_user, [summary])
        sink(SummarizationCompleted("run-1", "keep_last_turn", "none", len(removed), 0, 0, 0.0, 0))
