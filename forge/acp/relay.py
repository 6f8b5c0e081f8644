"""One turn's events to the editor: the `session/prompt` side of Forge's event stream.

`TurnRelay.run` consumes `Session.run_turn` and sends each event as it comes: text and
reasoning as message and thought chunks, tool calls with their status, the plan, and an
approval as `session/request_permission` (the turn waits for the answer). It returns the
ACP stop reason; a fatal error raises `TurnFailed` with the message to show.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol

from acp import update_agent_message_text, update_agent_thought_text, update_user_message_text
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    Cost,
    PermissionOption,
    RequestPermissionResponse,
    StopReason,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
    UserMessageChunk,
)

from forge.acp.permissions import decision_of, permission_options, permission_tool_call
from forge.acp.updates import (
    MAX_LIVE_OUTPUT,
    markdown_lines,
    plan_of_result,
    plan_update,
    tool_call_cancelled,
    tool_call_finished,
    tool_call_output,
    tool_call_running,
    tool_call_started,
)
from forge.agent.events import (
    ApprovalRequested,
    AssistantMessageDone,
    ErrorEvent,
    HookBlocked,
    HookOutput,
    HookWarning,
    MessageDelta,
    QuestionAsked,
    ReasoningDelta,
    SteeringAdded,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
    UserMessageShortened,
)
from forge.config.secrets import redact
from forge.session.core import Session
from forge.session.events import AttachmentsAdded, SessionEvent

logger = logging.getLogger(__name__)

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | UsageUpdate
    | UserMessageChunk
)

STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "answered": "end_turn",
    "max_turns": "max_turn_requests",
    "circuit_breaker": "end_turn",
    "cancelled": "cancelled",
    "hook_blocked": "refusal",  # a UserPromptSubmit hook kept the prompt from the model
    "hook_stopped": "end_turn",  # a hook's `continue: false`
}
"""Forge's turn endings as ACP stop reasons (an error is a JSON-RPC error instead)."""

LOOP_ENDING_TOOLS = frozenset({"task_completion", "converse"})
"""Calls that end the turn with text: their text is the answer, not a tool card."""

CANCELLED_CALL = "cancelled: the turn was cancelled before this call finished"

QUESTION_SHOWN = (
    "[The question is shown to the user in their editor, which cannot take an answer in the "
    "middle of a turn. End this turn now with `converse`; the user's next message answers it.]"
)
"""What `ask_question` returns to the model in an editor (ACP has no question request)."""


class TurnFailed(Exception):
    """The turn ended on an error; the message says what failed (secrets masked)."""


class EditorChannel(Protocol):
    """What a turn needs of the connection to the editor."""

    async def send(self, update: Update) -> None: ...

    async def ask(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse: ...


class TurnRelay:
    """Relays one turn; remembers the calls announced and not finished (a cancelled turn
    reports them failed)."""

    def __init__(self, session: Session, channel: EditorChannel) -> None:
        self.session = session
        self.channel = channel
        self.workspace: Path = session.workspace
        self.open_calls: dict[str, str] = {}
        self._streamed: list[str] = []
        self.follow: Callable[[str, str], None] | None = None
        """Set by the agent: follow a background command's card after the call (call id,
        command id) until the command ends (forge.acp.background_calls)."""
        self._output: dict[str, str] = {}

    async def run(self, events: AsyncIterator[SessionEvent]) -> StopReason:
        """Send every event of the turn; the stop reason."""
        error = ""
        async for event in events:
            if isinstance(event, ErrorEvent) and event.fatal:
                error = event.message
            elif isinstance(event, ErrorEvent):  # the turn goes on (a failed summary, …)
                await self.channel.send(update_agent_thought_text(redact(event.message) + "\n"))
            elif isinstance(event, TurnFinished):
                await self._finish(event)
                if event.reason == "error":
                    raise TurnFailed(redact(error or "the turn failed"))
                return STOP_REASONS.get(event.reason, "end_turn")
            else:
                await self.relay(event)
        return "end_turn"

    async def relay(self, event: SessionEvent) -> None:
        """Send what `event` shows (most events show nothing in an editor)."""
        if isinstance(event, MessageDelta):
            self._streamed.append(event.text)
            await self.channel.send(update_agent_message_text(redact(event.text)))
        elif isinstance(event, ReasoningDelta):
            await self.channel.send(update_agent_thought_text(redact(event.text)))
        elif isinstance(event, SubagentEvent):  # a child's progress, one line per call
            if isinstance(event.event, ToolCallStarted):
                described = self.session.describe_call(event.event.call)
                await self.channel.send(
                    update_agent_thought_text(redact(f"[{event.agent}] {described}\n"))
                )
        elif isinstance(event, HookBlocked):  # the user must see why (docs/adr/0043)
            text = f"[hook] {event.event} blocked by {event.hook}: {event.reason}\n"
            await self.channel.send(update_agent_message_text(redact(text)))
        elif isinstance(event, HookOutput):
            text = f"[hook] {event.event} {event.hook}: {event.text}\n"
            await self.channel.send(update_agent_thought_text(redact(text)))
        elif isinstance(event, HookWarning):
            await self.channel.send(update_agent_thought_text(redact(f"[hook] {event.text}\n")))
        elif isinstance(event, SteeringAdded):  # shown where the turn added it
            await self.channel.send(update_user_message_text(event.text))
        elif isinstance(event, UserMessageShortened):
            await self.channel.send(update_agent_message_text(f"[forge] {event.text}\n\n"))
        elif isinstance(event, AttachmentsAdded):
            lines = [*event.attached, *(f"not attached: {p}" for p in event.problems)]
            await self.channel.send(
                update_agent_thought_text(markdown_lines("\n".join(lines)) + "\n")
            )
        elif isinstance(event, AssistantMessageDone):
            for call in event.message.tool_calls:
                if call.name in LOOP_ENDING_TOOLS:
                    continue
                self.open_calls[call.id] = call.name
                title = redact(self.session.describe_call(call))
                await self.channel.send(tool_call_started(call, title, self.workspace))
        elif isinstance(event, ToolCallStarted) and event.call.id in self.open_calls:
            await self.channel.send(tool_call_running(event.call.id))
        elif isinstance(event, ToolOutputDelta) and event.call_id in self.open_calls:
            output = self._output.get(event.call_id, "") + event.text
            self._output[event.call_id] = output[-2 * MAX_LIVE_OUTPUT :]
            await self.channel.send(tool_call_output(event.call_id, redact(output)))
        elif isinstance(event, ToolCallFinished) and event.call.id in self.open_calls:
            del self.open_calls[event.call.id]
            self._output.pop(event.call.id, None)
            started = event.metadata.get("background_id") if not event.is_error else None
            if isinstance(started, str) and self.follow is not None:
                # A background command: its card stays in_progress, streaming (ADR 0057).
                await self.channel.send(tool_call_output(event.call.id, redact(event.result)))
                self.follow(event.call.id, started)
                return
            await self.channel.send(
                tool_call_finished(
                    event.call,
                    redact(event.result),
                    event.is_error,
                    event.metadata,
                    self.workspace,
                )
            )
            if (plan := plan_of_result(event.call.name, event.metadata)) is not None:
                await self.channel.send(plan_update(plan))
        elif isinstance(event, ApprovalRequested):
            await self._ask(event)
        elif isinstance(event, QuestionAsked):
            await self._show_question(event)

    async def _show_question(self, event: QuestionAsked) -> None:
        """Show the model's question (and its suggested answers) as message text."""
        lines = [f"\n{event.question}"] + [f"- {suggestion}" for suggestion in event.suggestions]
        await self.channel.send(update_agent_message_text(redact("\n".join(lines) + "\n")))
        if not event.future.done():
            event.future.set_result(QUESTION_SHOWN)

    async def _ask(self, event: ApprovalRequested) -> None:
        response = await self.channel.ask(
            permission_tool_call(event, self.workspace), permission_options(event)
        )
        if not event.future.done():
            event.future.set_result(decision_of(response))

    async def _finish(self, event: TurnFinished) -> None:
        """The answer of a turn ended by `task_completion`/`converse` (never streamed)."""
        final = event.final_text.strip()
        if final and final not in "".join(self._streamed):
            await self.channel.send(update_agent_message_text(redact(event.final_text)))

    async def report_usage(self) -> None:
        """The context's fill and the session's cost so far (`usage_update`), after a turn."""
        report = self.session.context_report()
        dollars = self.session.cost_report().dollars()
        await self.channel.send(
            UsageUpdate(
                session_update="usage_update",
                used=report.current_tokens,
                size=report.max_tokens,
                cost=Cost(amount=dollars, currency="USD") if dollars is not None else None,
            )
        )

    async def report_cancelled(self) -> None:
        """Tell the editor every announced call that did not finish was cancelled."""
        calls, self.open_calls = list(self.open_calls), {}
        for call_id in calls:
            await self.channel.send(tool_call_cancelled(call_id, CANCELLED_CALL))
