"""Agent events as plain dicts with stable field names (for `forge run --output jsonl`).

Every dict has a `type`; the other fields are documented in docs/adr/0015-headless-output.md.
Futures (approval, question) are never serialized; the client's answer is its own record.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from dataclasses import fields as dataclass_fields
from enum import Enum
from typing import Any

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
from forge.llm.messages import ToolCall

_CONTEXT_EVENT_TYPES: dict[type, str] = {
    ContextWarning: "context_warning",
    ContextUsage: "context_usage",
    SummarizationStarted: "summarization_started",
    SummarizationProgress: "summarization_progress",
    SummarizationCompleted: "summarization_completed",
    SummarizationFailed: "summarization_failed",
}


def _call_fields(call: ToolCall) -> dict[str, Any]:
    return {"call_id": call.id, "name": call.name, "arguments": call.arguments}


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """The event as a JSON-ready dict: `{"type": "message_delta", "text": "..."}` and so on."""
    if isinstance(event, MessageDelta):
        return {"type": "message_delta", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"type": "reasoning_delta", "text": event.text}
    if isinstance(event, AssistantMessageDone):
        message = event.message
        return {
            "type": "assistant_message",
            "id": message.id,
            "content": message.content,
            "reasoning": message.reasoning,
            "tool_calls": [
                {"call_id": c.id, "name": c.name, "arguments": c.arguments}
                for c in message.tool_calls
            ],
        }
    if isinstance(event, ToolCallStarted):
        return {"type": "tool_call_started", **_call_fields(event.call)}
    if isinstance(event, ToolOutputDelta):
        return {"type": "tool_output_delta", "call_id": event.call_id, "text": event.text}
    if isinstance(event, ToolCallFinished):
        return {
            "type": "tool_call_finished",
            **_call_fields(event.call),
            "result": event.result,
            "is_error": event.is_error,
            "exit_code": event.exit_code,
            "metadata": event.metadata,
        }
    if isinstance(event, ApprovalRequested):
        return {
            "type": "approval_requested",
            **_call_fields(event.call),
            "summary": event.summary,
            "preview": event.preview,
            "protected": event.protected,
        }
    if isinstance(event, QuestionAsked):
        return {
            "type": "question_asked",
            "question": event.question,
            "suggestions": list(event.suggestions),
        }
    if isinstance(event, UsageEvent):
        return {
            "type": "usage",
            **asdict(event.usage),
            "session_prompt_tokens": event.session_prompt_tokens,
            "session_completion_tokens": event.session_completion_tokens,
        }
    if isinstance(event, ErrorEvent):
        return {"type": "error", "message": event.message, "kind": event.kind, "fatal": event.fatal}
    if isinstance(event, TurnFinished):
        return {"type": "turn_finished", "reason": event.reason, "final_text": event.final_text}
    if isinstance(event, SummarizerDisabled):
        return {
            "type": "summarizer_disabled",
            "model": event.model,
            "reason": event.reason,
            "advice": event.advice,
            "text": event.text,
        }
    event_type = _CONTEXT_EVENT_TYPES.get(type(event))
    if event_type is not None:
        fields = {  # a field marked not recorded (`context.events.NOT_RECORDED`) stays out
            field.name: _plain(getattr(event, field.name))
            for field in dataclass_fields(event)
            if field.metadata.get("recorded", True)
        }
        return {"type": event_type, **fields}
    raise TypeError(f"not an agent event: {type(event).__name__}")


def _plain(value: Any) -> Any:
    # Enums (Trigger) become their plain string value, so consumers never see a repr.
    return value.value if isinstance(value, Enum) else value


def event_to_json(event: AgentEvent) -> str:
    """One JSON line (without the newline) for the event."""
    return dumps(event_to_dict(event))


_C1_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}
"""DEL and the C1 controls, which `ensure_ascii=False` would print raw (some terminals obey
U+009B as CSI): escaped like the C0 controls JSON always escapes (docs/adr/0035)."""


def dumps(record: dict[str, Any]) -> str:
    """A record as compact JSON; values JSON cannot hold (paths, sets) become strings. No
    control character is written raw: a terminal showing the stream obeys none."""
    return json.dumps(record, ensure_ascii=False, default=str).translate(_C1_ESCAPES)
