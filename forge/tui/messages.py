"""Textual messages shared across the app: what the agent-turn worker posts to the UI.

The worker never touches a widget. `forge.tui.event_dispatch` turns each agent event into one
of the typed messages below (one class per kind of event, carrying it) and posts it to each
widget that shows it; that widget handles it with `@on` (docs/adr/0016). An event message
does not bubble: every region that shows an event gets its own copy. After the turn's last
event the worker posts `TurnOver` to the chat and the summarization panel; the chat, once it
has closed the turn, posts `TurnEnded` to the app, which therefore sees it only after the chat
has shown everything before it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from textual.message import Message

from forge.agent.events import (
    AgentEvent,
    ApprovalRequested,
    AssistantMessageDone,
    ContextUsage,
    ContextWarning,
    ErrorEvent,
    MessageDelta,
    QuestionAsked,
    ReasoningDelta,
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
)

E = TypeVar("E")


@dataclass
class EventMessage(Message, Generic[E]):
    """One agent or context event, delivered to one widget that shows it."""

    event: E

    def __init_subclass__(cls, bubble: bool | None = False, **kwargs: Any) -> None:
        # Each region gets its own copy; none goes on up to the app by the DOM.
        super().__init_subclass__(bubble=bubble, **kwargs)


class AnswerStreamed(EventMessage[MessageDelta]):
    """Answer text streamed (joined into ~30 ms batches by `delta_batching`)."""


class SubagentActivity(EventMessage[SubagentEvent]):
    """An event of a child agent a `task` call runs (docs/adr/0045)."""


class ReasoningStreamed(EventMessage[ReasoningDelta]):
    """Reasoning text streamed (batched like the answer)."""


class AnswerDone(EventMessage[AssistantMessageDone]):
    """The assistant's message is complete."""


class ToolStarted(EventMessage[ToolCallStarted]):
    """A tool call started running."""


class ToolOutput(EventMessage[ToolOutputDelta]):
    """A running tool call printed output."""


class ToolFinished(EventMessage[ToolCallFinished]):
    """A tool call ended (its result, exit code, diff, plan)."""


class UsageCounted(EventMessage[UsageEvent]):
    """A request reported its tokens (and the session's totals)."""


class AgentFailed(EventMessage[ErrorEvent]):
    """The turn hit an error the user must see."""


class AgentStopped(EventMessage[TurnFinished]):
    """The agent ended the turn (answered, interrupted, a limit)."""


class ContextMeasured(EventMessage[ContextUsage]):
    """The prompt's size against the budget."""


class ContextWarned(EventMessage[ContextWarning]):
    """The prompt crossed the warning threshold."""


class SummarizationBegan(EventMessage[SummarizationStarted]):
    """A summarization run started."""


class SummarizationAdvanced(EventMessage[SummarizationProgress]):
    """A summarization run finished one of its parts."""


class SummarizationSucceeded(EventMessage[SummarizationCompleted]):
    """A summarization run (or a deterministic tier) shortened the context."""


class SummarizationFellShort(EventMessage[SummarizationFailed]):
    """A summarization run failed or was skipped (and what fell back)."""


class SummariesTurnedOff(EventMessage[SummarizerDisabled]):
    """A permanent error turned LLM summaries off for the session (ADR 0024)."""


if TYPE_CHECKING:
    from forge.config.store import ConfigStore
    from forge.session.core import Session


@dataclass
class ApprovalNeeded(Message):
    """The agent waits on `request.future` until the user approves or rejects a tool call."""

    request: ApprovalRequested


@dataclass
class QuestionNeeded(Message):
    """The agent waits on `request.future` for the user's answer to `ask_question`."""

    request: QuestionAsked


@dataclass
class QuestionAnswered(Message):
    """The user answered the agent's question (shown in the chat as their message)."""

    answer: str


@dataclass
class TurnOver(Message, bubble=False):
    """The worker's event stream ended: normally, by interruption, or by an exception.

    Always posted last for a turn (or a /compact run), to the chat and the summarization
    panel, so no panel is left spinning. `reason` is "completed", "cancelled" or "error";
    `error` is readable text for "error".
    """

    reason: str
    error: str = ""


@dataclass
class TurnEnded(Message):
    """The turn (or /compact run) is over and the chat has closed it (posted by the chat on
    `TurnOver`, to the app: the next queued message may start)."""

    reason: str
    error: str = ""


@dataclass
class AttachmentsShown(Message, bubble=False):
    """The files a message's mentions attached, and the mentions that attached nothing
    (posted by `forge.tui.input_flows.turn_events` to the chat, which shows them)."""

    attached: list[str]
    problems: list[str]


@dataclass
class RequestResumed(Message):
    """An event arrived after a retry was announced: the request went through."""


AnyEvent = AgentEvent
"""What the dispatcher takes (the agent's and the context's events)."""


@dataclass
class RuntimeLoaded(Message):
    """The start-up worker loaded the config and built the runtime (after the first frame)."""

    runtime: Session
    store: ConfigStore


@dataclass
class StartupFailed(Message):
    """The runtime could not be built (an unknown or malformed session id): Forge exits."""

    error: str
