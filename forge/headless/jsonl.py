"""Agent events as plain dicts with stable field names (for `forge run --output jsonl`).

Every record has a `type` (`record_type`: one name per event class) followed by the event's
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
from typing import Any, assert_never

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
from forge.llm.stream import Usage
from forge.session.events import AttachmentsAdded, SessionEvent


def record_type(event: SessionEvent) -> str | None:
    """The record name of `event`'s class; None for an event with no record: the provider's
    retries were never part of the stream's records (ADR 0015), so a run's records stay as
    they were (the `result` tells how the run ended), and the task's attachments are said on
    stderr. A child's event is named by the event it wraps."""
    match event:
        case MessageDelta():
            return "message_delta"
        case ReasoningDelta():
            return "reasoning_delta"
        case ToolOutputDelta():
            return "tool_output_delta"
        case AssistantMessageDone():
            return "assistant_message"
        case ToolCallStarted():
            return "tool_call_started"
        case ToolCallFinished():
            return "tool_call_finished"
        case ApprovalRequested():
            return "approval_requested"
        case QuestionAsked():
            return "question_asked"
        case UsageEvent():
            return "usage"
        case UserMessageShortened():
            return "user_message_shortened"
        case SteeringAdded():
            return "steering_added"
        case ErrorEvent():
            return "error"
        case TurnFinished():
            return "turn_finished"
        case ContextWarning():
            return "context_warning"
        case ContextUsage():
            return "context_usage"
        case SummarizationStarted():
            return "summarization_started"
        case SummarizationProgress():
            return "summarization_progress"
        case SummarizationCompleted():
            return "summarization_completed"
        case SummarizationFailed():
            return "summarization_failed"
        case SummarizerDisabled():
            return "summarizer_disabled"
        case HookOutput():
            return "hook_output"
        case HookBlocked():
            return "hook_blocked"
        case HookWarning():
            return "hook_warning"
        case SubagentEvent():
            return record_type(event.event)
        case RetryScheduled() | AttachmentsAdded():
            return None
        case _:
            assert_never(event)


_EXTRA_FIELDS: dict[type, tuple[str, ...]] = {
    SummarizerDisabled: ("text",),
    UserMessageShortened: ("text",),
}
"""Properties written after the fields (the notice's readable line)."""


def _call_fields(call: ToolCall) -> dict[str, Any]:
    return {"call_id": call.id, "name": call.name, "arguments": call.arguments}


def _explicit(event: SessionEvent) -> dict[str, Any] | None:
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


def _from_fields(event: SessionEvent) -> dict[str, Any]:
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


def has_record(event: SessionEvent) -> bool:
    """Whether `event` is written as a record (`record_type` says which are not)."""
    return record_type(event) is not None


def event_to_dict(event: SessionEvent) -> dict[str, Any]:
    """The event as a JSON-ready dict: `{"type": "message_delta", "text": "..."}` and so on.
    A child agent's event is the record of the event it wraps plus `agent` (the child's name)
    and `parent_call_id` (its `task` call; docs/adr/0045). Raises TypeError for an event
    without a record (ask `has_record` first)."""
    if isinstance(event, SubagentEvent):
        inner = event_to_dict(event.event)
        return {**inner, "agent": event.agent, "parent_call_id": event.call_id}
    name = record_type(event)
    if name is None:
        raise TypeError(f"no jsonl record for {type(event).__name__}")
    explicit = _explicit(event)
    return {"type": name, **(explicit if explicit is not None else _from_fields(event))}


_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
"""DEL and the C1 controls, which `ensure_ascii=False` would print raw (some terminals obey
U+009B as CSI): escaped like the C0 controls JSON always escapes (docs/adr/0035)."""


def dumps(record: dict[str, Any]) -> str:
    """A record as compact JSON; values JSON cannot hold (paths, sets) become strings. No
    control character is written raw: a terminal showing the stream obeys none."""
    return json.dumps(record, ensure_ascii=False, default=str).translate(_C1_ESCAPES)
