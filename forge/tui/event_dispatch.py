"""The one place that turns the core's events into Textual messages (docs/adr/0016).

`ROUTES` says, for each kind of event, which message carries it and which regions show it;
`EventDispatcher.dispatch`, called by the turn worker for every event, posts one copy of that
message to each region's widget, which handles it with `@on` where it is shown. No widget
dispatches events itself. A lookup by the event's exact class, not a chain of `isinstance`:
a delta batch costs one dict lookup and one `post_message` (streaming stays as fast as it was).

An event class with no route is a programming error the tests catch
(`tests/tui/test_event_dispatch.py`), not something to skip silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from textual.message import Message
from textual.message_pump import MessagePump

from forge.agent.events import (
    AgentEvent,
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
from forge.tui.messages import (
    AgentFailed,
    AgentStopped,
    AnswerDone,
    AnswerStreamed,
    ApprovalNeeded,
    ContextMeasured,
    ContextWarned,
    HookBlockShown,
    HookOutputShown,
    HookWarned,
    QuestionNeeded,
    ReasoningStreamed,
    RequestResumed,
    SubagentActivity,
    SummariesTurnedOff,
    SummarizationAdvanced,
    SummarizationBegan,
    SummarizationFellShort,
    SummarizationSucceeded,
    ToolFinished,
    ToolOutput,
    ToolStarted,
    UsageCounted,
    UserMessageCut,
)
from forge.tui.retry_notices import RetryNotice
from forge.tui.steering import SteeringShown

Region = Literal["app", "chat", "status", "summarization", "plan", "subagents", "header"]
"""Who shows events: the app (dialogs, toasts), the chat, the status pane, its summarization
panel, plan and running subagents, the header."""

Route = tuple[type[Message], tuple[Region, ...]]

ROUTES: dict[type[Any], Route] = {
    MessageDelta: (AnswerStreamed, ("chat",)),
    ReasoningDelta: (ReasoningStreamed, ("chat",)),
    AssistantMessageDone: (AnswerDone, ("chat",)),
    ToolCallStarted: (ToolStarted, ("chat", "subagents")),  # the panel: a `task`'s prompt
    ToolOutputDelta: (ToolOutput, ("chat",)),
    ToolCallFinished: (ToolFinished, ("chat", "plan")),
    ApprovalRequested: (ApprovalNeeded, ("app",)),
    QuestionAsked: (QuestionNeeded, ("app",)),
    UsageEvent: (UsageCounted, ("status",)),
    UserMessageShortened: (UserMessageCut, ("chat",)),
    SteeringAdded: (SteeringShown, ("chat",)),
    ErrorEvent: (AgentFailed, ("chat",)),
    TurnFinished: (AgentStopped, ("chat",)),
    ContextUsage: (ContextMeasured, ("status",)),
    ContextWarning: (ContextWarned, ("status", "app")),
    SummarizationStarted: (SummarizationBegan, ("status", "summarization")),
    SummarizationProgress: (SummarizationAdvanced, ("summarization",)),
    SummarizationCompleted: (SummarizationSucceeded, ("chat", "status", "summarization")),
    SummarizationFailed: (SummarizationFellShort, ("chat", "status", "summarization")),
    SummarizerDisabled: (SummariesTurnedOff, ("chat", "summarization", "header")),
    RetryScheduled: (RetryNotice, ("app",)),
    HookOutput: (HookOutputShown, ("chat",)),
    HookBlocked: (HookBlockShown, ("chat",)),
    HookWarning: (HookWarned, ("chat",)),
    SubagentEvent: (SubagentActivity, ("chat", "subagents", "status")),  # status: its cost
}


def route_of(event: AgentEvent) -> Route:
    """The message class and the regions of `event` (KeyError: an event with no route)."""
    return ROUTES[type(event)]


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

    def dispatch(self, event: AgentEvent) -> None:
        """Post `event` to each region that shows it (in the order of `ROUTES`)."""
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
                message: Message = RetryNotice(event, summarizer=summarizer)
            else:
                message = message_class(event)  # type: ignore[call-arg]
            self.regions[region].post_message(message)

    def turn_over(self) -> None:
        """The turn's events ended: nothing announced in it is still under way."""
        self.retry_shown = False
        self.summarizing.clear()
