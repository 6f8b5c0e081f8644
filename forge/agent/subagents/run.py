"""Running `task` calls: each child is its own `Agent` with a fresh conversation, its own
context manager and tools, the parent's checkpoints, and a policy no looser than the parent's
(docs/adr/0045-subagents.md).

`Subagents.run_tasks` is the loop's step for a batch of consecutive `task` calls: it starts
every child (at most `agents.max_parallel` at once, one semaphore shared with nothing else),
yields their events as they come (wrapped in `SubagentEvent`; an approval request as
`ApprovalRequested` with `agent` set, so the client's dialog names the child), and appends each
call's result in call order: the child's final text and a line of figures (`completed`,
`turns`, `tokens`, `cached_tokens`, `cost_usd`). A child that hits its `max_turns`, the run's
budget, an error, or Esc still reports what it had found, with `completed: false`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from forge.agent.approvals import ApprovalPolicy, Decision
from forge.agent.costs import CostLedger, child_label
from forge.agent.events import (
    AgentEvent,
    ApprovalRequested,
    AssistantMessageDone,
    ErrorEvent,
    HookBlocked,
    HookOutput,
    HookWarning,
    MessageDelta,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.message_meta import (
    CHILD_CALLS_KEY,
    CHILD_REASON_KEY,
    FIGURES_PREFIX,
    with_notices,
)
from forge.agent.modes import MODE_ORDER, PermissionMode
from forge.agent.parts import AgentParts
from forge.agent.subagents.batches import TaskHost
from forge.agent.subagents.child_prompt import child_system_prompt
from forge.agent.subagents.definitions import AgentDefinition, AgentDefinitions
from forge.agent.tools.arguments import validate_arguments
from forge.agent.tools.base import Tool, ToolError
from forge.agent.tools.registry import ToolRegistry
from forge.agent.tools.task import TaskArgs
from forge.agent.turn.circuit_breaker import CircuitBreaker
from forge.agent.turn.event_pump import EventPump
from forge.agent.turn.loop import Agent
from forge.agent.turn.turn_events import TurnEvents
from forge.agent.turn.turn_state import TurnState
from forge.config.prices import PriceTable
from forge.context.conversation import Conversation
from forge.context.protocols import ContextManagerProtocol
from forge.llm.messages import Message, ToolCall, tool_result
from forge.llm.protocols import Provider
from forge.llm.stream import Usage

logger = logging.getLogger(__name__)

REPORT_LIMIT = 20_000
"""Characters of a child's report kept (its end: the conclusion is last)."""
INTERRUPTED_REPORT = "[interrupted by the user before the agent finished]"
NO_REPORT = "(the agent reported nothing)"
COMPLETED_REASONS = frozenset({"completed", "answered"})
RECORDED_ARGUMENT_CHARS = 200
"""Characters of each string argument a recorded child call keeps (a row shows about 60)."""


@dataclass
class ChildSetup:
    """What the session makes for one child: its provider (the parent's, or a clone on the
    definition's model), context manager, event router, tools and session file."""

    provider: Provider
    context_manager: ContextManagerProtocol
    turn_events: TurnEvents
    registry: ToolRegistry
    session_id: str = ""
    """The child's session file (listed under its parent's); "" when none is kept."""
    tool_deferral: ToolDeferral | None = None
    """The child's MCP tools, deferred as its parent's are, starting with the parent's loads
    (docs/adr/0054)."""
    close: Callable[[], Awaitable[None]] | None = None


class ChildFactory(Protocol):
    """The session's side of a child (`forge.session.children.SessionChildren`)."""

    @property
    def max_parallel(self) -> int:
        """Children running at the same time (`agents.max_parallel`)."""
        ...

    def definitions(self) -> AgentDefinitions:
        """The agents as their files say now (re-read for every batch)."""
        ...

    def prices(self) -> PriceTable:
        """The price table (a child's cost in its report)."""
        ...

    def make(
        self, definition: AgentDefinition, costs: CostLedger, conversation: Conversation
    ) -> ChildSetup:
        """The parts of one child run of `definition`; `costs` is told of its requests."""
        ...


@dataclass
class ChildLedger(CostLedger):
    """A child's own ledger that counts every request on the parent's too, per agent name."""

    agent_name: str = ""
    """What the parent counts its requests under: the child's label (`child_label`)."""
    parent: CostLedger | None = None

    def record_agent(self, model: str, usage: Usage) -> None:
        """A child request: counted here and as the parent's "subagent" tokens."""
        super().record_agent(model, usage)
        if self.parent is not None:
            self.parent.record_subagent(self.agent_name, model, usage)

    def record_summary(self, model: str, usage: Usage) -> None:
        """A child's summary request: counted the same way."""
        super().record_summary(model, usage)
        if self.parent is not None:
            self.parent.record_subagent(self.agent_name, model, usage)


def stricter_mode(parent: PermissionMode, limit: PermissionMode | None) -> PermissionMode:
    """The child's mode: the parent's, but never looser than the definition's `limit`."""
    if limit is None:
        return parent
    return min(parent, limit, key=MODE_ORDER.index)


class ChildPolicy(ApprovalPolicy):
    """A child's approval policy: the parent's `auto_approve` and command allowlist, its own
    "always" answers, and the parent's mode as it is at each call, bounded by `limit`."""

    def __init__(self, parent: ApprovalPolicy, limit: PermissionMode | None) -> None:
        super().__init__(
            auto_approve=parent.auto_approve,
            command_allowlist=parent.command_allowlist,
            mode=stricter_mode(parent.mode, limit),
        )
        self.parent = parent
        self.limit = limit

    def decide(self, call: ToolCall, tool: Tool, protected: str | None = None) -> Decision:
        """As `ApprovalPolicy.decide`, in the parent's current mode bounded by `limit` (a mode
        switch while the child runs applies to its next call)."""
        self.mode = stricter_mode(self.parent.mode, self.limit)
        return super().decide(call, tool, protected)


@dataclass
class ChildRun:
    """One `task` call: its child, what it has said so far, and how it ended."""

    call: ToolCall
    agent: str
    prompt: str = ""
    definition: AgentDefinition | None = None
    error: str = ""
    """Why the child could not start (bad arguments, an unknown agent)."""
    texts: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    finished: TurnFinished | None = None
    failure: str = ""
    interrupted: bool = False
    ledger: ChildLedger | None = None
    turns: int = 0
    session_id: str = ""
    model: str = ""
    calls: dict[str, dict[str, str]] = field(default_factory=dict)
    """The child's tool calls by id, in order, as its result records them (`CHILD_CALLS_KEY`)."""
    notices: list[AgentEvent] = field(default_factory=list)
    """The hook notices of the child's calls, as the parent's chat showed them."""

    def observe(self, event: AgentEvent) -> None:
        """Take note of one of the child's events."""
        if isinstance(event, ToolCallStarted | ToolCallFinished):
            status = "running" if isinstance(event, ToolCallStarted) else "ok"
            if isinstance(event, ToolCallFinished) and event.is_error:
                status = "error"
            self.calls[event.call.id] = call_record(event.call, status)
        elif isinstance(event, HookBlocked | HookOutput | HookWarning):
            self.notices.append(event)
        if isinstance(event, MessageDelta):
            self.partial.append(event.text)
        elif isinstance(event, AssistantMessageDone):
            self.partial.clear()
            if event.message.content.strip():
                self.texts.append(event.message.content.strip())
        elif isinstance(event, TurnFinished):
            self.finished = event
        elif isinstance(event, ErrorEvent) and event.fatal:
            self.failure = event.message

    @property
    def completed(self) -> bool:
        """Whether the child finished its task (rather than being stopped)."""
        return (
            not self.interrupted
            and self.finished is not None
            and self.finished.reason in COMPLETED_REASONS
        )

    def report_text(self) -> str:
        """What the child found: its final text, else everything it said (and was saying)."""
        if self.completed and self.finished is not None and self.finished.final_text.strip():
            text = self.finished.final_text.strip()
        else:
            said = [*self.texts, "".join(self.partial).strip()]
            text = "\n\n".join(part for part in said if part)
        if len(text) > REPORT_LIMIT:
            text = (
                f"[… {len(text) - REPORT_LIMIT} earlier characters omitted]\n"
                + text[-REPORT_LIMIT:]
            )
        return text

    def figures(self, prices: PriceTable) -> dict[str, Any]:
        """`{agent, completed, reason, turns, tokens, cached_tokens, cost_usd}`."""
        ledger = self.ledger or CostLedger()
        totals = [*ledger.agent.values(), *ledger.summarization.values()]
        reason = (
            "interrupted"
            if self.interrupted
            else (self.finished.reason if self.finished is not None else "error")
        )
        cost = ledger.report(prices).dollars()
        return {
            "agent": self.agent,
            "completed": self.completed,
            "reason": reason,
            "turns": self.turns,
            "tokens": sum(t.prompt + t.output for t in totals),
            "cached_tokens": sum(t.cached for t in totals),
            "cost_usd": None if cost is None else round(cost, 6),
            **({"model": self.model} if self.model else {}),
            **({"session_id": self.session_id} if self.session_id else {}),
        }

    def result(self, prices: PriceTable) -> tuple[str, bool, dict[str, Any]]:
        """The call's result text, whether it is an error, and its metadata."""
        if self.error:
            return self.error, True, {}
        figures = self.figures(prices)
        text = self.report_text()
        if self.failure and not text:
            text = f"the agent failed: {self.failure}"
        elif self.failure:
            text = f"{text}\n\nthe agent failed: {self.failure}"
        if self.interrupted:
            text = f"{text}\n\n{INTERRUPTED_REPORT}" if text else INTERRUPTED_REPORT
        shown = dict(figures)
        shown.pop("session_id", None)
        content = f"{text or NO_REPORT}{FIGURES_PREFIX}{json.dumps(shown)}"
        is_error = bool(self.failure) and not self.texts
        return content, is_error, {"subagent": figures}


class Subagents:
    """The session's children: starts them for the loop's `task` batches, bounds their modes,
    keeps each agent's "always" answers to that agent."""

    def __init__(self, workspace: Path, factory: ChildFactory) -> None:
        self.workspace = workspace
        self.factory = factory
        self._policies: dict[str, ChildPolicy] = {}
        self._labels: dict[str, str] = {}
        """Each `task` call's child label (its line in `/cost`), by call id."""
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_key: tuple[asyncio.AbstractEventLoop, int] | None = None

    def _slots(self) -> asyncio.Semaphore:
        key = (asyncio.get_running_loop(), self.factory.max_parallel)
        if self._semaphore is None or self._semaphore_key != key:
            self._semaphore = asyncio.Semaphore(key[1])
            self._semaphore_key = key
        return self._semaphore

    def policy_for(self, definition: AgentDefinition, parent: ApprovalPolicy) -> ApprovalPolicy:
        """The child's policy: the parent's rules and mode, bounded by the definition; one
        per agent name, so an "always" answer to a child holds for that agent only."""
        policy = self._policies.get(definition.name)
        if (
            policy is None
            or policy.parent is not parent
            or policy.auto_approve != parent.auto_approve
            or policy.command_allowlist != parent.command_allowlist
        ):
            approved = policy.approved_this_session if policy is not None else frozenset()
            policy = ChildPolicy(parent, definition.permission_mode)
            for name in approved:
                policy.approve_always(name)
            self._policies[definition.name] = policy
        policy.limit = definition.permission_mode
        return policy

    async def run_tasks(
        self,
        host: TaskHost,
        calls: Sequence[ToolCall],
        turn: TurnState,
        pump: EventPump[AgentEvent],
        breaker: CircuitBreaker,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run the children of `calls` at once; yield their events; record their results."""
        definitions = self.factory.definitions()
        ledger = host.context_manager.ledger_text
        runs = [_prepare(call, definitions, ledger) for call in calls]
        queue: asyncio.Queue[AgentEvent | ChildRun] = asyncio.Queue()
        tasks: list[asyncio.Task[None]] = []
        for run in runs:
            yield ToolCallStarted(run.call)
            if not run.error:
                tasks.append(asyncio.ensure_future(self._run_child(run, host, queue)))
        remaining = len(tasks)
        try:
            while remaining:
                item = await queue.get()
                if isinstance(item, ChildRun):
                    remaining -= 1
                    continue
                yield item
        except (asyncio.CancelledError, GeneratorExit):
            # Esc (or the run's timeout): every child stops and reports what it had.
            for run in runs:
                run.interrupted = run.finished is None and not run.error
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)
            for run in runs:
                _append_result(host.conversation, run, self.factory.prices())
            raise
        for run in runs:
            yield self._record(host.conversation, run, turn, breaker)

    def _record(
        self, conversation: Conversation, run: ChildRun, turn: TurnState, breaker: CircuitBreaker
    ) -> ToolCallFinished:
        content, is_error, metadata = _append_result(conversation, run, self.factory.prices())
        if breaker.record(run.call.name, content, is_error=is_error):
            turn.finished = TurnFinished(
                "circuit_breaker",
                f"stopped after {breaker.count} identical errors from {run.call.name}",
            )
        return ToolCallFinished(run.call, content, is_error, None, metadata)

    async def _run_child(
        self, run: ChildRun, host: TaskHost, queue: asyncio.Queue[AgentEvent | ChildRun]
    ) -> None:
        definition = run.definition
        assert definition is not None  # `_prepare` set it, or an error
        try:
            async with self._slots():
                await self._drive(run, definition, host, queue)
        except asyncio.CancelledError:
            run.interrupted = run.finished is None
            raise
        except Exception as error:  # the child's failure is its result; the parent goes on
            logger.exception("subagent %s failed", run.agent)
            run.failure = str(error) or type(error).__name__
        finally:
            queue.put_nowait(run)

    async def _drive(
        self,
        run: ChildRun,
        definition: AgentDefinition,
        host: TaskHost,
        queue: asyncio.Queue[AgentEvent | ChildRun],
    ) -> None:
        label = self._labels.get(run.call.id)
        if label is None:  # one line of `/cost` per `task` call (docs/adr/0048)
            taken = {*self._labels.values(), *host.costs.subagents}
            label = self._labels[run.call.id] = child_label(definition.name, run.prompt, taken)
        ledger = run.ledger = ChildLedger(agent_name=label, parent=host.costs)
        conversation = Conversation()
        setup = self.factory.make(definition, ledger, conversation)
        run.session_id, run.model = setup.session_id, setup.provider.model
        policy = self.policy_for(definition, host.policy)
        # The parent's hooks apply to the child's tool calls; its end runs SubagentStop.
        hooks = host.hooks.for_subagent() if host.hooks is not None else None
        parts = AgentParts(
            setup.provider,
            setup.context_manager,
            policy,
            command_timeout=host.command_timeout,
            hooks=hooks,
            sandbox=host.sandbox,
        )
        child = Agent(
            parts,
            setup.registry,
            self.workspace,
            system_prompt=child_system_prompt(definition, self.workspace, setup.registry.names()),
            conversation=conversation,
            max_llm_calls=definition.max_turns,
            ask_user=False,
            checkpoints=host.checkpoints,
            costs=ledger,
            turn_events=setup.turn_events,
            tool_deferral=setup.tool_deferral,
        )
        child.stop_check = host.stop_check
        child.refuse_images = host.refuse_images  # the session's llm.vision (ADR 0055)
        try:
            async with aclosing(child.run_turn(run.prompt)) as events:
                async for event in events:
                    run.observe(event)
                    run.turns = child.turn_llm_calls
                    if isinstance(event, ApprovalRequested):
                        queue.put_nowait(dataclasses.replace(event, agent=definition.name))
                    else:
                        queue.put_nowait(SubagentEvent(definition.name, run.call.id, event))
        finally:
            run.turns = child.turn_llm_calls
            if setup.close is not None:
                await setup.close()


def _prepare(
    call: ToolCall, definitions: AgentDefinitions, ledger: Callable[[], str] = lambda: ""
) -> ChildRun:
    try:
        args = validate_arguments(TaskArgs, call.name, call.parsed_arguments())
    except (ToolError, ValueError) as error:
        return ChildRun(call, agent="", error=str(error))
    definition = definitions.get(args.agent)
    if definition is None:
        listing = ", ".join(definitions.names()) or "none"
        return ChildRun(
            call,
            agent=args.agent,
            error=f"unknown agent {args.agent!r}; the agents are: {listing}",
        )
    if not args.prompt.strip():
        return ChildRun(call, agent=definition.name, error="task: the prompt is empty")
    prompt = args.prompt
    if args.work_ledger and (text := ledger()):  # the parent's, on request (docs/adr/0050)
        prompt = f"{prompt.rstrip()}\n\nWhat this session has done so far:\n{text}"
    return ChildRun(call, agent=definition.name, prompt=prompt, definition=definition)


def _append_result(
    conversation: Conversation, run: ChildRun, prices: PriceTable
) -> tuple[str, bool, dict[str, Any]]:
    content, is_error, metadata = run.result(prices)
    message: Message = tool_result(run.call, content)
    meta: dict[str, Any] = {"subagent": run.agent} if run.agent else {}
    if run.agent and not run.error:
        # How the child ended and what it called: a resumed `task` row reads as the live one
        # (docs/adr/0048); the model reads the same in the `[subagent]` line.
        meta[CHILD_REASON_KEY] = metadata.get("subagent", {}).get("reason", "")
        meta[CHILD_CALLS_KEY] = list(run.calls.values())
        meta = with_notices(meta, run.notices)
    if is_error:
        meta |= {"is_error": True, "exit_code": None}
    conversation.append(message.evolve(meta=meta) if meta else message)
    return content, is_error, metadata


def call_record(call: ToolCall, status: str) -> dict[str, str]:
    """A child's call as its `task` result records it: name, arguments (long strings cut, so a
    written file's content is not kept twice) and status ("running", "ok", "error")."""
    arguments = call.arguments
    if len(arguments) > RECORDED_ARGUMENT_CHARS:
        try:
            parsed = call.parsed_arguments()
        except ValueError:
            parsed = {}
        short = {
            key: value[:RECORDED_ARGUMENT_CHARS] if isinstance(value, str) else value
            for key, value in parsed.items()
            if isinstance(value, str | int | float | bool)
        }
        arguments = json.dumps(short, ensure_ascii=False)
    return {"id": call.id, "name": call.name, "arguments": arguments, "status": status}
