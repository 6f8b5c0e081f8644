"""One instance of every class of `SessionEvent`, for the tests that feed a front end every
event the session can yield (docs/adr/0059): `sample_events` is checked against the union
itself, so a new event fails those tests until it has a sample here and a case in each front
end's dispatcher."""

from __future__ import annotations

import typing

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
    Trigger,
    TurnFinished,
    UsageEvent,
    UserMessageShortened,
)
from forge.llm.messages import ToolCall, assistant
from forge.llm.stream import Usage
from forge.session.events import AttachmentsAdded, SessionEvent

CALL = ToolCall("call_1", "read_file", '{"path": "a.txt"}')


def event_classes() -> set[type]:
    """Every class of the `SessionEvent` union, read from the union."""
    return set(typing.get_args(SessionEvent))


def sample_events() -> list[SessionEvent]:
    """One instance of every event class, in the order a turn could yield them (needs a
    running loop for the futures). A tool call is announced before it starts."""
    return [
        AttachmentsAdded(("attached a.txt (lines 1-3)",), ("@missing.txt: no such file",)),
        UserMessageShortened("3f9a2c", 200_000, 14_000, 8_000),
        SteeringAdded("m7", "use the v2 API instead"),
        ContextUsage(50, 100),
        ContextWarning(90, 100, 0.85),
        RetryScheduled(1, 4, 0.5, "server_error", "HTTP 503", 503, "m"),
        ReasoningDelta("think"),
        MessageDelta("Hel"),
        AssistantMessageDone(assistant("hi", tool_calls=(CALL,))),
        UsageEvent(Usage(10, 2, 12), 10, 2),
        ApprovalRequested(CALL, summary="read_file: a.txt", preview=""),
        ToolCallStarted(CALL),
        ToolOutputDelta(CALL.id, "out"),
        ToolCallFinished(CALL, "1 | a", metadata={"path": "a.txt"}),
        QuestionAsked("Which?", ("a", "b")),
        SummarizationStarted("r1", "tool_call", Trigger.AUTO, "m", 90, 100, 3),
        SummarizationProgress("r1", "tool_call", 1, 3),
        SummarizationCompleted("r1", "tool_call", "m", 3, 90, 40, 1.5, 3),
        SummarizationFailed("r1", "tool_call", "m", "timeout", "prune", 1, 90, 60),
        SummarizerDisabled("cheap-m", "404", "/settings → Summarization Model"),
        HookOutput("PostToolUse", ".forge/hooks.json: ./fmt.sh", "formatted a.py"),
        HookBlocked("PreToolUse", ".forge/hooks.json: ./guard.sh", "no writes to prod/"),
        HookWarning("Stop", "hook .forge/hooks.json: ./x.sh failed (exit 1)"),
        SubagentEvent("explore", "call_task", ToolCallStarted(CALL)),
        ErrorEvent("boom", "server_error", fatal=False),
        TurnFinished("completed", "done"),
    ]
