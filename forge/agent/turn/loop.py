"""The agent loop: one user message in, a stream of typed events out, until the turn ends.

A turn: append the user message; then, until something ends the turn, let the context manager
summarize if it must, stream one reply from the provider, append it, and run its tool calls in
order (asking for approval where the policy says so; see `forge.agent.turn.tool_calls`). The turn
ends on a loop-breaking tool (`task_completion`, `converse`), a plain answer, the circuit
breaker, the LLM-call limit, or an error. Whatever stops it, including the consuming task
being cancelled, the conversation is left provider-valid (see `forge.agent.turn.interruption`).
See docs/adr/0013-agent-loop-and-events.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from pathlib import Path
from typing import Any

from forge.agent.approvals import ApprovalPolicy
from forge.agent.costs import CostLedger
from forge.agent.error_kinds import EmptyReplyError, error_kind
from forge.agent.events import (
    AgentEvent,
    AssistantMessageDone,
    ErrorEvent,
    MessageDelta,
    ReasoningDelta,
    RetryScheduled,
    Trigger,
    TurnFinished,
    UsageEvent,
    UserMessageShortened,
)
from forge.agent.hooks.session_hooks import SessionHooks
from forge.agent.hooks.turn_hooks import around_turn
from forge.agent.mcp.deferral import ToolDeferral
from forge.agent.parts import AgentParts
from forge.agent.sandbox.sandbox import CommandSandbox
from forge.agent.subagents.batches import TaskRunner, call_batches, is_task_batch
from forge.agent.tools.background import BackgroundCommands
from forge.agent.tools.base import FileChangeRecorder
from forge.agent.tools.registry import ToolRegistry
from forge.agent.turn.circuit_breaker import CircuitBreaker
from forge.agent.turn.event_pump import EventPump
from forge.agent.turn.interruption import (
    answer_interrupted_calls,
    cancelled_result,
    ensure_valid,
    keep_partial_answer,
)
from forge.agent.turn.steering import Steering
from forge.agent.turn.tool_calls import run_tool_call
from forge.agent.turn.turn_events import TurnEvents
from forge.agent.turn.turn_state import TurnState
from forge.context.conversation import Conversation
from forge.context.groups import is_pinned
from forge.context.plan_pin import PlanPin
from forge.context.protocols import ContextManagerProtocol
from forge.llm import stream as llm_stream
from forge.llm.errors import ContextOverflowError, LLMError
from forge.llm.image_parts import ImagePart
from forge.llm.messages import Message, system
from forge.llm.protocols import Provider
from forge.llm.window_discovery import WindowTracker

logger = logging.getLogger(__name__)

SKIPPED_RESULT = "[skipped: the turn ended before this call ran]"


class Agent:
    """Drives turns over one conversation. Clients (TUI, headless) consume `run_turn`.

    `conversation` is a resumed one, or None for a new one; the system prompt becomes (or
    replaces) its first message. `max_llm_calls` bounds the LLM calls of one turn;
    `ask_user=False` answers `ask_question` with `NO_USER_ANSWER` instead of asking.
    `turn_events` is the router whose `emit` the context manager was built with (a new one,
    which nothing emits into, when omitted). Run one turn (or `compact`) at a time.
    """

    def __init__(
        self,
        parts: AgentParts,
        registry: ToolRegistry,
        workspace: Path,
        *,
        system_prompt: str,
        conversation: Conversation | None = None,
        max_llm_calls: int = 50,
        ask_user: bool = True,
        checkpoints: FileChangeRecorder | None = None,
        costs: CostLedger | None = None,
        on_costs: Callable[[CostLedger], None] | None = None,
        context_window: WindowTracker | None = None,
        turn_events: TurnEvents | None = None,
        subagents: TaskRunner | None = None,
        tool_deferral: ToolDeferral | None = None,
    ) -> None:
        self.parts = parts
        """Provider, context manager, policy and command timeout: the Session holds the same
        object, so a settings switch changes them in one place (docs/adr/0041)."""
        self.turn_events = turn_events if turn_events is not None else TurnEvents()
        """The road of context events to the running turn: the context manager was given its
        `emit` at construction (docs/adr/0039)."""
        self.registry = registry
        self.workspace = workspace
        self.conversation = conversation if conversation is not None else Conversation()
        self.max_llm_calls = max_llm_calls
        self.ask_user = ask_user
        self.costs = costs if costs is not None else CostLedger()
        """Tokens per model of the agent's and the summarizer's requests (the session hands
        `costs.record_summary` to the context manager)."""
        self.session_prompt_tokens, self.session_completion_tokens = self.costs.agent_tokens()
        self.on_costs = on_costs
        """Called after each turn and compaction (the session log keeps the ledger, so a
        resumed session's cost goes on from where it was)."""
        self._current_turn: TurnState | None = None
        self._plan_pin = PlanPin()  # the plan once, after the latest user message (ADR 0028)
        self.checkpoints = checkpoints
        """Told before and after every file a tool writes (ADR 0027)."""
        self.context_window = context_window
        """Awaited briefly before a call while the server is asked for its window, and taught
        the window an overflow error states (docs/adr/0019)."""
        self.stop_check: Callable[[], str | None] | None = None
        """Set by a client with a limit of its own (`forge run --max-budget-usd`): asked
        before each LLM request (and after summarizing, before the agent's request); a reason
        it returns ends the turn with that reason, the in-flight request having finished."""
        self.turn_llm_calls = 0
        """The main agent's LLM requests in the current (or last) turn."""
        self.refuse_images: Callable[[], str | None] = lambda: None
        """Why the model is not sent images (the session sets it from `llm.vision`): a tool's
        image then comes back as a note in its result (docs/adr/0055, part 2)."""
        self.subagents = subagents
        """Runs the `task` calls, several of one reply at once (docs/adr/0045); None: no
        subagents (a child agent, a test's bare agent)."""
        self.tool_deferral = tool_deferral
        """The MCP tools sent or deferred behind `tool_search` (docs/adr/0054): decided before
        the first request, whose system prompt then lists the deferred servers for good."""
        self.steering = Steering()
        """Messages the user sent during the turn, added at its next safe point (issue 40)."""
        self.base_system_prompt = system_prompt
        self.set_system_prompt(self._system_prompt())
        ensure_valid(self.conversation)

    # --- configuration (read from the shared parts) -------------------------------------------
    @property
    def provider(self) -> Provider:
        """The session's provider: what a turn without a model of its own uses."""
        return self.parts.provider

    @property
    def context_manager(self) -> ContextManagerProtocol:
        """The session's context manager."""
        return self.parts.context_manager

    @property
    def policy(self) -> ApprovalPolicy:
        """The session's approval policy."""
        return self.parts.policy

    @property
    def command_timeout(self) -> float:
        """Seconds a `run_command` call may take."""
        return self.parts.command_timeout

    @property
    def hooks(self) -> SessionHooks | None:
        """The session's hooks (docs/adr/0043), if any."""
        return self.parts.hooks

    @property
    def sandbox(self) -> CommandSandbox | None:
        """The sandbox of the model's commands (docs/adr/0053), if any."""
        return self.parts.sandbox

    @property
    def background(self) -> BackgroundCommands | None:
        """The session's background commands (docs/adr/0057), if any."""
        return self.parts.background

    @property
    def turn_running(self) -> bool:
        """Whether a turn (or a `compact` run) is in progress."""
        return self._current_turn is not None

    def steer(self, text: str) -> bool:
        """Add `text` to the running turn as a user message at its next safe point (after the
        running tool calls, before the next request); False when no turn runs (send it as
        a turn of its own then)."""
        if self._current_turn is None:
            return False
        self.steering.add(text)
        return True

    def _system_prompt(self) -> str:
        """The base prompt, and the deferred tools' listing once it is fixed."""
        listing = self.tool_deferral.listing if self.tool_deferral is not None else ""
        return f"{self.base_system_prompt}\n\n{listing}" if listing else self.base_system_prompt

    async def _decide_tool_deferral(self, deferral: ToolDeferral) -> None:
        """Before the first request: wait for the window and the starting MCP servers, decide
        whether to defer (a resumed session has decided), and fix the system prompt's
        listing."""
        if self.context_window is not None:
            await self.context_window.settle()  # "auto" compares with a share of the window
        await deferral.settle()
        deferral.decide()
        self.set_system_prompt(self._system_prompt())

    def set_system_prompt(self, text: str) -> None:
        """Make `text` the conversation's first (system) message, replacing an older one."""
        messages = self.conversation.messages
        if messages and messages[0].role == "system":
            if messages[0].content != text:
                self.conversation.replace_message(0, system(text))
        else:
            self.conversation.replace_range(0, 0, [system(text)])

    # --- turns ---------------------------------------------------------------------------------
    async def run_turn(
        self,
        user_text: str,
        *,
        provider: Provider | None = None,
        required_tool: str | None = None,
        meta: Mapping[str, Any] | None = None,
        images: tuple[ImagePart, ...] = (),
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run one turn for `user_text`; yields events and ends with `TurnFinished`
        (unless the consuming task is cancelled, which leaves the conversation valid).
        `provider` answers this turn's LLM calls instead of the session's (a custom
        command's model); the next turn uses the session's again. `required_tool`: a tool
        the turn's first reply must call (offered only if registered). `meta` goes on the
        user message (what the user typed, hook notices: forge.agent.message_meta); `images`
        go with it (docs/adr/0055, part 2)."""
        if self._current_turn is not None:
            self._settle(self._current_turn)  # abandoned without being closed
        turn = self._current_turn = TurnState(provider=provider)
        if required_tool is not None and required_tool in self.registry.names():
            turn.required_tool = required_tool
        last = next((m for m in reversed(self.conversation.messages) if not is_pinned(m)), None)
        if not (
            last is not None
            and last.role == "user"
            and last.content == user_text
            and [image.sha256 for image in last.images] == [image.sha256 for image in images]
        ):
            # The same text again right after a turn that failed before any reply (sent again
            # with Up) is that message retried, not a second copy of it.
            message = Message(
                role="user", content=user_text, meta=dict(meta or {}), images=tuple(images)
            )
            self.conversation.append(message)  # whole, in the session file
            shortened = self.context_manager.fit_user_message(message)
            if shortened is not None:  # larger than its share: its head and tail are sent
                self.conversation.replace_message(len(self.conversation) - 1, shortened.message)
                yield UserMessageShortened(
                    message.id,
                    shortened.original_characters,
                    shortened.kept_characters,
                    shortened.share_tokens,
                )
        pump: EventPump[AgentEvent] = EventPump()
        self.turn_llm_calls = 0
        try:
            with self.turn_events.attached(pump.put):
                # Stop hooks may make the turn go on: the loop runs again (hook_turns).
                turn_loop = around_turn(
                    self.hooks, self.conversation, turn, lambda: self._turn_events(turn, pump)
                )
                async with aclosing(turn_loop) as events:
                    async for event in events:
                        self.costs.observe(event)
                        yield event
        except (asyncio.CancelledError, GeneratorExit):
            turn.interrupted = True  # the partial answer kept says so
            raise
        except Exception as error:
            logger.exception("turn failed")
            self._settle(turn)
            yield ErrorEvent(
                message=str(error) or type(error).__name__, kind=error_kind(error), fatal=True
            )
            yield TurnFinished("error")
        finally:
            self._settle(turn)
            self._costs_changed()

    async def compact(self, instructions: str = "") -> AsyncGenerator[AgentEvent, None]:
        """Summarize the conversation now (`/compact`); yields the context events it causes,
        and an ErrorEvent (not fatal) if the context manager failed."""
        if self._current_turn is not None:
            self._settle(self._current_turn)
        pump: EventPump[AgentEvent] = EventPump()
        try:
            with self.turn_events.attached(pump.put):
                work = asyncio.ensure_future(
                    self.context_manager.compact(self.conversation, instructions, Trigger.MANUAL)
                )
                async with aclosing(pump.while_running(work)) as events:
                    async for event in events:
                        self.costs.observe(event)
                        yield event
            error = work.exception()
            if error is not None:
                logger.warning("compaction failed: %s", error)
                yield ErrorEvent(message=str(error), kind=error_kind(error), fatal=False)
        finally:
            ensure_valid(self.conversation)
            self._costs_changed()

    def _costs_changed(self) -> None:
        if self.on_costs is not None:
            self.on_costs(self.costs)

    def _settle(self, turn: TurnState) -> None:
        """Leave the conversation valid after whatever stopped `turn` (once per turn)."""
        if self._current_turn is turn:
            self._current_turn = None
        if turn.settled:
            return
        turn.settled = True
        if turn.waiting_on is not None and not turn.waiting_on.done():
            turn.waiting_on.cancel()  # tells the client its dialog is moot
        self._keep_partial(turn)
        if turn.interrupted:
            answer_interrupted_calls(self.conversation, turn.running_call)
        ensure_valid(self.conversation)

    def _keep_partial(self, turn: TurnState) -> None:
        keep_partial_answer(
            self.conversation,
            "".join(turn.partial_text),
            "".join(turn.partial_reasoning),
            interrupted=turn.interrupted,
        )
        turn.clear_partial()

    async def _turn_events(
        self, turn: TurnState, pump: EventPump[AgentEvent]
    ) -> AsyncGenerator[AgentEvent, None]:
        breaker = CircuitBreaker()
        llm_calls = self.turn_llm_calls  # a turn a Stop hook continued counts on
        while True:
            for added in self.steering.add_to(self.conversation):  # the safe point
                yield added
            if llm_calls >= self.max_llm_calls:
                yield TurnFinished("max_turns")
                return
            if (stop := self._stop_reason()) is not None:
                yield TurnFinished(stop)
                return
            if self.tool_deferral is not None and not self.tool_deferral.settled:
                await self._decide_tool_deferral(self.tool_deferral)
            self.context_manager.set_tools(self.registry.specs())  # counted into the prompt
            self._plan_pin.pin(self.conversation)
            if self.context_window is not None:
                await self.context_window.settle()  # at once unless the server is being asked
            work = asyncio.ensure_future(
                self.context_manager.evaluate_and_summarize(self.conversation)
            )
            async with aclosing(pump.while_running(work)) as events:
                async for event in events:
                    yield event
            error = work.exception()
            if error is not None:
                # The manager has its own fallbacks; if it still fails, try the call anyway.
                logger.warning("context management failed: %s", error)
                yield ErrorEvent(message=str(error), kind=error_kind(error), fatal=False)
            if (stop := self._stop_reason()) is not None:  # summarizing may have spent it
                yield TurnFinished(stop)
                return
            llm_calls = self.turn_llm_calls = llm_calls + 1
            completion: list[llm_stream.Completion] = []
            try:
                async with aclosing(self._call_model(turn, pump, completion)) as events:
                    async for event in events:
                        yield event
            except LLMError as error:
                logger.warning("LLM call failed: %s: %s", type(error).__name__, error)
                self._keep_partial(turn)
                yield ErrorEvent(message=str(error), kind=error_kind(error), fatal=True)
                yield TurnFinished("error")
                return
            message = completion[0].message
            if not message.tool_calls:
                if self.steering.pending:  # sent while the model answered: it reads it now
                    continue
                yield TurnFinished("answered", message.content)
                return
            tasks = self.subagents is not None
            for index, batch in call_batches(message.tool_calls, tasks=tasks):
                steps = (
                    self.subagents.run_tasks(self, batch, turn, pump, breaker)
                    if self.subagents is not None and is_task_batch(batch, tasks=tasks)
                    else run_tool_call(self, batch[0], turn, pump, breaker)
                )
                async with aclosing(steps) as events:
                    async for event in events:
                        yield event
                if turn.finished is not None and not self._steered_on(turn):
                    for skipped in message.tool_calls[index + len(batch) :]:
                        self.conversation.append(cancelled_result(skipped, SKIPPED_RESULT))
                    yield turn.finished
                    return

    def _steered_on(self, turn: TurnState) -> bool:
        """A turn the model ended with `task_completion` or `converse` goes on when a steered
        message waits (the call is answered; the message comes next)."""
        finished = turn.finished
        if finished is None or finished.reason not in ("completed", "answered"):
            return False
        if not self.steering.pending:
            return False
        turn.finished = None
        return True

    def _turn_provider(self, turn: TurnState) -> Provider:
        """The turn's own provider, else the session's (as the settings now say)."""
        return turn.provider if turn.provider is not None else self.parts.provider

    def _stop_reason(self) -> str | None:
        return self.stop_check() if self.stop_check is not None else None

    async def _call_model(
        self,
        turn: TurnState,
        pump: EventPump[AgentEvent],
        completion: list[llm_stream.Completion],
    ) -> AsyncGenerator[AgentEvent, None]:
        """Stream one reply (retrying once after compaction on a context overflow), append it,
        and put its Completion in `completion`."""
        overflow_retried = False
        while True:
            try:
                async with aclosing(self._stream_reply(turn, completion)) as events:
                    async for event in events:
                        yield event
                break
            except ContextOverflowError as overflow:
                if overflow_retried:
                    raise
                overflow_retried = True
                overflow_error = overflow
                if self.context_window is not None and overflow.context_window:
                    self.context_window.learn_from_overflow(overflow.context_window)
            turn.clear_partial()
            logger.info("context overflow: compacting and retrying once")
            work = asyncio.ensure_future(
                self.context_manager.compact(self.conversation, trigger=Trigger.OVERFLOW)
            )
            async with aclosing(pump.while_running(work)) as events:
                async for event in events:
                    yield event
            error = work.exception()
            if error is not None:
                # Say why compaction failed, then end the turn on the overflow itself: that is
                # what the client must act on (a smaller request, another model).
                logger.warning("compaction after a context overflow failed: %s", error)
                yield ErrorEvent(message=str(error), kind=error_kind(error), fatal=False)
                raise overflow_error
        finished = completion[0]
        message = finished.message
        if not message.content and not message.tool_calls:
            raise EmptyReplyError("the model sent an empty reply")
        usage = finished.usage
        if usage is not None:
            # Before appending: the reported prompt is exactly the conversation as sent.
            self.context_manager.record_usage(usage.prompt_tokens, self.conversation)
            self.session_prompt_tokens += usage.prompt_tokens
            self.session_completion_tokens += usage.completion_tokens
            self.costs.record_agent(self._turn_provider(turn).model, usage)
        else:
            # No usage reported (or none that could be trusted): the cost and every budget
            # count Forge's own estimate of the request (issue 34); the token tallies and the
            # gauge stay on what servers reported.
            estimate = self.context_manager.estimated_usage(self.conversation, message)
            if estimate is not None:
                self.costs.record_agent(self._turn_provider(turn).model, estimate)
        self.conversation.append(message)
        turn.clear_partial()
        yield AssistantMessageDone(message)
        if usage is not None:
            yield UsageEvent(usage, self.session_prompt_tokens, self.session_completion_tokens)
        for event in pump.drain():
            yield event

    async def _stream_reply(
        self, turn: TurnState, completion: list[llm_stream.Completion]
    ) -> AsyncGenerator[AgentEvent, None]:
        provider = self._turn_provider(turn)
        required, turn.required_tool = turn.required_tool, None  # the first reply only
        stream = provider.stream(
            self.conversation.messages, self.registry.specs(), required_tool=required
        )
        try:
            async for item in stream:
                # The stream's own events reach the client as the provider made them.
                if isinstance(item, MessageDelta):
                    turn.partial_text.append(item.text)
                    yield item
                elif isinstance(item, ReasoningDelta):
                    turn.partial_reasoning.append(item.text)
                    yield item
                elif isinstance(item, RetryScheduled):
                    yield item
                elif isinstance(item, llm_stream.StreamFinished):
                    completion.append(item.completion)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()  # ends the HTTP request now, not when garbage collected
        if not completion:
            raise EmptyReplyError("the stream ended without a reply")
