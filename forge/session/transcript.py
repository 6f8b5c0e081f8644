"""The per-turn projection every front end renders from (docs/adr/0059, Part 3).

A `TurnTranscript` folds a turn's events, one by one, into what a front end shows and must
remember: the answer streamed so far, the tool calls the model named with their state (started,
their output's tail, their end), the notices and the summaries. The bookkeeping each front end
kept for itself — `forge acp`'s open calls and their output, `forge run`'s started calls and
partial answer — is written here once; a front end calls `observe` with each event, then renders
the event, reading the transcript where it needs more than the event.

Pure: no I/O, no clock, no front-end types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

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
from forge.llm.messages import ToolCall
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.session.notice_lines import context_line, hook_line

OUTPUT_TAIL = 16_000
"""The characters of a running call's output the transcript keeps (its tail): more than any
front end shows of a call that has not ended (`forge acp` shows 4,000)."""


@dataclass
class CallState:
    """One tool call of the turn, from the message that named it (or its end, for a call that
    never ran) to its end."""

    call: ToolCall
    announced: bool = False
    """An assistant message named it (a call the mode refused also has one)."""
    started: bool = False
    """It ran: `ToolCallStarted` came (a refused or rejected call never starts)."""
    output: str = ""
    """The tail of what it printed while it ran (at most `OUTPUT_TAIL` characters)."""
    end: ToolCallFinished | None = None

    @property
    def open(self) -> bool:
        """Named and not ended (a cancelled turn reports these)."""
        return self.end is None


@dataclass
class TurnTranscript:
    """What a turn has shown so far; `observe` each event in order."""

    calls: dict[str, CallState] = field(default_factory=dict)
    """The turn's tool calls by id, in the order they were named."""
    notices: list[str] = field(default_factory=list)
    """The readable lines of the turn's notices (context, hooks, retries, non-fatal errors,
    attachments), in order."""
    summaries: list[SummarizationCompleted] = field(default_factory=list)
    """The summarization runs that shortened the context during the turn."""
    ending: TurnFinished | None = None
    _answer: list[str] = field(default_factory=list)
    _earlier: list[str] = field(default_factory=list)
    # Pieces, joined when read: a long streamed answer stays linear.

    @property
    def answer(self) -> str:
        """The answer text streamed since the last finished assistant message (what a turn
        cut short had said)."""
        return "".join(self._answer)

    @property
    def streamed(self) -> str:
        """All the answer text streamed in the turn."""
        return "".join(self._earlier + self._answer)

    def call(self, call_id: str) -> CallState | None:
        """The call `call_id`, when the turn has seen it."""
        return self.calls.get(call_id)

    def open_calls(self) -> list[CallState]:
        """The calls named and not ended, in order."""
        return [state for state in self.calls.values() if state.open]

    def observe(self, event: SessionEvent) -> None:
        """Fold `event` in (every class of the union has its case)."""
        match event:
            case MessageDelta():
                self._answer.append(event.text)
            case AssistantMessageDone():
                self._earlier.extend(self._answer)
                self._answer.clear()
                for call in event.message.tool_calls:
                    self.calls.setdefault(call.id, CallState(call)).announced = True
            case ToolCallStarted():
                self._state(event.call).started = True
            case ToolOutputDelta():
                if (state := self.calls.get(event.call_id)) is not None:
                    state.output = (state.output + event.text)[-OUTPUT_TAIL:]
            case ToolCallFinished():
                self._state(event.call).end = event
            case SummarizationCompleted():
                self.summaries.append(event)
                self.notices.append(context_line(event))
            case (
                ContextWarning()
                | SummarizationStarted()
                | SummarizationFailed()
                | SummarizerDisabled()
                | UserMessageShortened()
            ):
                self.notices.append(context_line(event))
            case HookBlocked() | HookOutput() | HookWarning():
                self.notices.append(hook_line(event))
            case ErrorEvent():
                if not event.fatal:
                    self.notices.append(event.message)
            case AttachmentsAdded():
                self.notices.extend(event.attached)
                self.notices.extend(f"not attached: {problem}" for problem in event.problems)
            case SteeringAdded():  # the user's words, added to the running turn
                self.notices.append(f"[steering] {event.text}")
            case TurnFinished():
                self.ending = event
            case (
                ReasoningDelta()
                | RetryScheduled()
                | UsageEvent()
                | ContextUsage()
                | SummarizationProgress()
                | ApprovalRequested()
                | QuestionAsked()
                | SubagentEvent()
            ):
                pass  # shown as they come; nothing of the turn's state changes
            case _:
                assert_never(event)

    def _state(self, call: ToolCall) -> CallState:
        return self.calls.setdefault(call.id, CallState(call))
