"""Agent events as plain dicts with stable field names (for `forge run --output jsonl`).

Every record has a `type` (`RECORD_TYPES`: one name per event class) followed by the event's
dataclass fields, in their order, with three plain rules: a tool call becomes its `call_id`,
`name` and `arguments`; a `Usage` becomes its token fields; an enum becomes its value. A future
(approval, question) is never written; the client's answer is its own record. The few records
whose fields differ from their class on purpose say so in `_EXTRA_FIELDS` and `_explicit`.
The records are documented in docs/adr/0015-headless-output.md; a golden test holds them
(tests/headless/test_jsonl_golden.py).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import fields
from enum import Enum
from typing import Any

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
from forge.llm.messages import ToolCall
from forge.llm.stream import Usage

RECORD_TYPES: dict[type, str] = {
    MessageDelta: "message_delta",
    ReasoningDelta: "reasoning_delta",
    AssistantMessageDone: "assistant_message",
    ToolCallStarted: "tool_call_started",
    ToolOutputDelta: "tool_output_delta",
    ToolCallFinished: "tool_call_finished",
    ApprovalRequested: "approval_requested",
    QuestionAsked: "question_asked",
    UsageEvent: "usage",
    UserMessageShortened: "user_message_shortened",
    SteeringAdded: "steering_added",
    ErrorEvent: "error",
    TurnFinished: "turn_finished",
    ContextWarning: "context_warning",
    ContextUsage: "context_usage",
    SummarizationStarted: "summarization_started",
    SummarizationProgress: "summarization_progress",
    SummarizationCompleted: "summarization_completed",
    SummarizationFailed: "summarization_failed",
    SummarizerDisabled: "summarizer_disabled",
    HookOutput: "hook_output",
    HookBlocked: "hook_blocked",
    HookWarning: "hook_warning",
}
"""The record name of each event class that has a record."""

UNRECORDED: frozenset[type] = frozenset({RetryScheduled})
"""Events with no record: the provider's retries were never part of the stream's records
(ADR 0015), so a run's records stay as they were; the `result` tells how the run ended."""

_EXTRA_FIELDS: dict[type, tuple[str, ...]] = {
    SummarizerDisabled: ("text",),
    UserMessageShortened: ("text",),
}
"""Properties written after the fields (the notice's readable line)."""


def _call_fields(call: ToolCall) -> dict[str, Any]:
    return {"call_id": call.id, "name": call.name, "arguments": call.arguments}


def _explicit(event: AgentEvent) -> dict[str, Any] | None:
    """The records not made from the class's fields: an assistant message is its message's
    id, content, reasoning and tool calls, not the `Message` object."""
    if isinstance(event, AssistantMessageDone):
        message = event.message
        return {
            "id": message.id,
            "content": message.content,
            "reasoning": message.reasoning,
            "tool_calls": [_call_fields(call) for call in message.tool_calls],
        }
    return None


def _from_fields(event: AgentEvent) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for field in fields(event):
        if not field.metadata.get("recorded", True):
            continue  # marked not recorded (`context.events.NOT_RECORDED`): a client-only field
        value = getattr(event, field.name)
        if isinstance(value, asyncio.Future):
            continue
        if isinstance(value, ToolCall):
            record.update(_call_fields(value))
        elif isinstance(value, Usage):
            # `estimated` only when true: a reported usage's record is as it always was.
            record.update(
                {
                    f.name: getattr(value, f.name)
                    for f in fields(value)
                    if f.name != "estimated" or value.estimated
                }
            )
        else:
            record[field.name] = _plain(value)
    for name in _EXTRA_FIELDS.get(type(event), ()):
        record[name] = getattr(event, name)
    return record


def _plain(value: Any) -> Any:
    # Enums (Trigger) become their plain string value, so consumers never see a repr; tuples
    # become lists (as JSON writes them anyway).
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


def has_record(event: AgentEvent) -> bool:
    """Whether `event` is written as a record (a retry is not: `UNRECORDED`; a child's event
    as the event it wraps)."""
    if isinstance(event, SubagentEvent):
        return has_record(event.event)
    return type(event) not in UNRECORDED


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """The event as a JSON-ready dict: `{"type": "message_delta", "text": "..."}` and so on.
    A child agent's event is the record of the event it wraps plus `agent` (the child's name)
    and `parent_call_id` (its `task` call; docs/adr/0045). Raises TypeError for an event
    without a record (ask `has_record` first)."""
    if isinstance(event, SubagentEvent):
        inner = event_to_dict(event.event)
        return {**inner, "agent": event.agent, "parent_call_id": event.call_id}
    record_type = RECORD_TYPES.get(type(event))
    if record_type is None:
        raise TypeError(f"no jsonl record for {type(event).__name__}")
    explicit = _explicit(event)
    return {"type": record_type, **(explicit if explicit is not None else _from_fields(event))}


_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
"""DEL and the C1 controls, which `ensure_ascii=False` would print raw (some terminals obey
U+009B as CSI): escaped like the C0 controls JSON always escapes (docs/adr/0035)."""


def dumps(record: dict[str, Any]) -> str:
    """A record as compact JSON; values JSON cannot hold (paths, sets) become strings. No
    control character is written raw: a terminal showing the stream obeys none."""
    return json.dumps(record, ensure_ascii=False, default=str).translate(_C1_ESCAPES)
