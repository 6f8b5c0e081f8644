"""The one place that turns the session's events into Textual messages (docs/adr/0016, 0059).

`route_of` says, for each kind of event, which message carries it and which regions show it,
in one `match` that ends in `assert_never`: an event added to `SessionEvent` and not routed
here is a mypy error naming this function. `EventDispatcher.dispatch`, called by the turn
worker for every event, posts one copy of that message to each region's widget, which handles
it with `@on` where it is shown. No widget dispatches events itself. The streamed events come
first in the `match`: a delta batch costs one class check and one `post_message`.

`tests/tui/test_event_dispatch.py` feeds every class of the union (enumerated from it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, assert_never

from textual.message import Message
from textual.message_pump import MessagePump

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
from forge.session.events import AttachmentsAdded, SessionEvent
from forge.tui.messages import (
    ApprovalRequestedShown,
    AssistantMessageDoneShown,
    AttachmentsAddedShown,
    ContextUsageShown,
    ContextWarningShown,
    ErrorEventShown,
    HookBlockedShown,
    HookOutputShown,
    HookWarningShown,
    MessageDeltaShown,
    QuestionAskedShown,
    ReasoningDeltaShown,
    RequestResumed,
    SteeringAddedShown,
    SubagentEventShown,
    SummarizationCompletedShown,
    SummarizationFailedShown,
    SummarizationProgressShown,
    SummarizationStartedShown,
    SummarizerDisabledShown,
    ToolCallFinishedShown,
    ToolCallStartedShown,
    ToolOutputDeltaShown,
    TurnFinishedShown,
    UsageEventShown,
    UserMessageShortenedShown,
)
from forge.tui.retry_notices import RetryScheduledShown

Region = Literal["app", "chat", "status", "summarization", "plan", "subagents", "header"]
"""Who shows events: the app (dialogs, toasts), the chat, the status pane, its summarization
panel, plan and running subagents, the header."""

Route = tuple[type[Message], tuple[Region, ...]]


def route_of(event: SessionEvent) -> Route:
    """The message class and the regions of `event`."""
    match event:
        case MessageDelta():
            return MessageDeltaShown, ("chat",)
        case ReasoningDelta():
            return ReasoningDeltaShown, ("chat",)
        case ToolOutputDelta():
            return ToolOutputDeltaShown, ("chat",)
        case AssistantMessageDone():
            return AssistantMessageDoneShown, ("chat",)
        case ToolCallStarted():
            return ToolCallStartedShown, ("chat", "subagents")  # the panel: a `task`'s prompt
        case ToolCallFinished():
            return ToolCallFinishedShown, ("chat", "plan")
        case ApprovalRequested():
            return ApprovalRequestedShown, ("app",)
        case QuestionAsked():
            return QuestionAskedShown, ("app",)
        case UsageEvent():
            return UsageEventShown, ("status",)
        case UserMessageShortened():
            return UserMessageShortenedShown, ("chat",)
        case SteeringAdded():
            return SteeringAddedShown, ("chat",)
        case AttachmentsAdded():
            return AttachmentsAddedShown, ("chat",)
        case ErrorEvent():
            return ErrorEventShown, ("chat",)
        case TurnFinished():
            return TurnFinishedShown, ("chat",)
        case ContextUsage():
            return ContextUsageShown, ("status",)
        case ContextWarning():
            return ContextWarningShown, ("status", "app")
        case SummarizationStarted():
            return SummarizationStartedShown, ("status", "summarization")
        case SummarizationProgress():
            return SummarizationProgressShown, ("summarization",)
        case SummarizationCompleted():
            return SummarizationCompletedShown, ("chat", "status", "summarization")
        case SummarizationFailed():
            return SummarizationFailedShown, ("chat", "status", "summarization")
        case SummarizerDisabled():
            return SummarizerDisabledShown, ("chat", "summarization", "header")
        case RetryScheduled():
            return RetryScheduledShown, ("app",)
        case HookOutput():
            return HookOutputShown, ("chat",)
        case HookBlocked():
            return HookBlockedShown, ("chat",)
        case HookWarning():
            return HookWarningShown, ("chat",)
        case SubagentEvent():
            return SubagentEventShown, ("chat", "subagents", "status")  # status: its cost
        case _:
            assert_never(event)


class EventDispatcher:
    """Posts each event of a turn, as its message, to the widgets that show it."""

    def __init__(self, regions: Mapping[Region, MessagePump]) -> None:
        self.regions = regions
        self.retry_shown = False
        """A retry was announced this turn: the next event says the request went through."""
        self.summarizing: dict[str, str] = {}
        """The summarization runs started and not yet ended, with their model: a retry for
        that model meanwhile is the summarizer's, not the agent's (the provider's event does
        not say whose it is)."""

    def dispatch(self, event: SessionEvent) -> None:
        """Post `event` to each region that shows it (in the order `route_of` names them)."""
        if self.retry_shown and type(event) is not RetryScheduled:
            self.retry_shown = False
            self.regions["app"].post_message(RequestResumed())
        message_class, regions = route_of(event)
        if isinstance(event, SummarizationStarted):
            self.summarizing[event.run_id] = event.model
        elif isinstance(event, SummarizationCompleted | SummarizationFailed):
            self.summarizing.pop(event.run_id, None)
        for region in regions:
            if isinstance(event, RetryScheduled):
                summarizer = event.model in self.summarizing.values()
                message: Message = RetryScheduledShown(event, summarizer=summarizer)
            else:
                message = message_class(event)  # type: ignore[call-arg]
            self.regions[region].post_message(message)

    def turn_over(self) -> None:
        """The turn's events ended: nothing announced in it is still under way."""
        self.retry_shown = False
        self.summarizing.clear()
