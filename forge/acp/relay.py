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
from typing import Protocol, assert_never

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
    ContextUsage,
    ContextWarning,
    ErrorEvent,
    HookBlocked,
    HookOutput,
    HookWarning,
    MessageDelta,
    QuestionAsked,
    ReasoningDelta,
    RetryScheduled,
    SteeringAdded,
    SubagentEvent,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    SummarizerDisabled,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnFinished,
    UsageEvent,
    UserMessageShortened,
)
from forge.config.secrets import redact
from forge.context.plan import PLAN_TOOL
from forge.session.core import Session
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.session.notice_lines import context_line, describe_retry, hook_line
from forge.session.transcript import CallState, TurnTranscript

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
CARDLESS_TOOLS = LOOP_ENDING_TOOLS | {PLAN_TOOL}
"""Calls shown as something else than a tool card: the answer, or the plan (ACP's `plan`
update, once, where it happened)."""

CANCELLED_CALL = "cancelled: the turn was cancelled before this call finished"

DROPPED = (ContextUsage, SummarizationProgress)
"""Events an editor is not sent: the context's fill before each request (the `usage_update`
after each request and after the turn carries it, with the cost) and a summarization's
part-by-part progress (its start and its end are sent as thoughts)."""

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
    """Relays one turn, rendering each event after folding it into the turn's transcript
    (which remembers the calls announced and not finished: a cancelled turn reports them
    failed)."""

    def __init__(self, session: Session, channel: EditorChannel) -> None:
        self.session = session
        self.channel = channel
        self.workspace: Path = session.workspace
        self.transcript = TurnTranscript()
        self.follow: Callable[[str, str], None] | None = None
        """Set by the agent: follow a background command's card after the call (call id,
        command id) until the command ends (forge.acp.background_calls)."""

    async def run(self, events: AsyncIterator[SessionEvent]) -> StopReason:
        """Send every event of the turn; the stop reason."""
        error = ""
        async for event in events:
            await self.relay(event)
            if isinstance(event, ErrorEvent) and event.fatal:
                error = event.message
            elif isinstance(event, TurnFinished):
                if event.reason == "error":
                    raise TurnFailed(redact(error or "the turn failed"))
                return STOP_REASONS.get(event.reason, "end_turn")
        return "end_turn"

    def _card(self, call_id: str) -> CallState | None:
        """The call when the editor shows it as a tool card: announced by the model's message,
        and not one shown as something else (the answer, the plan)."""
        state = self.transcript.call(call_id)
        if state is None or not state.announced or state.call.name in CARDLESS_TOOLS:
            return None
        return state

    async def relay(self, event: SessionEvent) -> None:
        """Fold `event` into the transcript and send what it shows in an editor: one case per
        event of the union (mypy names a new one); `DROPPED` lists those an editor has no
        place for."""
        self.transcript.observe(event)
        match event:
            case MessageDelta():
                await self._say(event.text)
            case ReasoningDelta():
                await self._think(event.text)
            case ToolOutputDelta():
                if (state := self._card(event.call_id)) is not None and state.open:
                    await self.channel.send(tool_call_output(event.call_id, redact(state.output)))
            case AssistantMessageDone():
                for call in event.message.tool_calls:
                    if self._card(call.id) is not None:
                        title = redact(self.session.describe_call(call))
                        await self.channel.send(tool_call_started(call, title, self.workspace))
            case ToolCallStarted():
                if self._card(event.call.id) is not None:
                    await self.channel.send(tool_call_running(event.call.id))
            case ToolCallFinished():
                if self._card(event.call.id) is not None:
                    await self._call_finished(event)
                elif (plan := plan_of_result(event.call.name, event.metadata)) is not None:
                    await self.channel.send(plan_update(plan))  # once, where it was set
            case ApprovalRequested():
                await self._ask(event)
            case QuestionAsked():
                await self._show_question(event)
            case SubagentEvent():  # a child's progress, one line per call
                if isinstance(event.event, ToolCallStarted):
                    described = self.session.describe_call(event.event.call)
                    await self._think(f"[{event.agent}] {described}\n")
            case HookBlocked():  # the user must see why (docs/adr/0043)
                await self._say(hook_line(event) + "\n")
            case HookOutput():
                await self._think(hook_line(event) + "\n")
            case HookWarning():
                await self._think(f"[hook] {event.text}\n")
            case SteeringAdded():  # shown where the turn added it (docs/adr/0057)
                await self.channel.send(update_user_message_text(event.text))
            case UserMessageShortened():
                await self.channel.send(update_agent_message_text(f"[forge] {event.text}\n\n"))
            case AttachmentsAdded():
                lines = [*event.attached, *(f"not attached: {p}" for p in event.problems)]
                await self.channel.send(
                    update_agent_thought_text(markdown_lines("\n".join(lines)) + "\n")
                )
            case ErrorEvent():  # a fatal one is the turn's error (`run`); the turn goes on
                if not event.fatal:
                    await self._think(event.message + "\n")
            case RetryScheduled():
                await self._think(f"[forge] {event.model}: {describe_retry(event)}…\n")
            case UsageEvent():  # the cost moved: the editor's meter follows during the turn
                await self.report_usage()
            case (
                ContextWarning()
                | SummarizationStarted()
                | SummarizationCompleted()
                | SummarizationFailed()
                | SummarizerDisabled()
            ):
                await self._think(context_line(event) + "\n")
            case TurnFinished():
                await self._finish(event)
            case ContextUsage() | SummarizationProgress():
                pass  # DROPPED: see its docstring
            case _:
                assert_never(event)

    async def _say(self, text: str) -> None:
        await self.channel.send(update_agent_message_text(redact(text)))

    async def _think(self, text: str) -> None:
        await self.channel.send(update_agent_thought_text(redact(text)))

    async def _call_finished(self, event: ToolCallFinished) -> None:
        started = event.metadata.get("background_id") if not event.is_error else None
        if isinstance(started, str) and self.follow is not None:
            # A background command: its card stays in_progress, streaming (ADR 0057).
            await self.channel.send(tool_call_output(event.call.id, redact(event.result)))
            self.follow(event.call.id, started)
            return
        await self.channel.send(
            tool_call_finished(
                event.call, redact(event.result), event.is_error, event.metadata, self.workspace
            )
        )

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
        if final and final not in self.transcript.streamed:
            await self.channel.send(update_agent_message_text(redact(event.final_text)))

    async def report_usage(self) -> None:
        """The context's fill and the session's cost so far (`usage_update`), after a turn."""
        report = self.session.reports.context()
        dollars = self.session.reports.cost().dollars()
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
        for state in self.transcript.open_calls():
            self.transcript.observe(ToolCallFinished(state.call, CANCELLED_CALL, is_error=True))
            if self._card(state.call.id) is not None:
                await self.channel.send(tool_call_cancelled(state.call.id, CANCELLED_CALL))
