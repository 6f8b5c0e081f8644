"""The headless writers on their own: one readable line per context event in text mode, the
streamed answer kept whole, secrets masked in both modes."""

from __future__ import annotations

import io
import json

from forge.agent.events import (
    AgentEvent,
    ApprovalDecision,
    ApprovalVerdict,
    AssistantMessageDone,
    ContextUsage,
    ContextWarning,
    ErrorEvent,
    MessageDelta,
    SummarizationCompleted,
    SummarizationFailed,
    SummarizationProgress,
    SummarizationStarted,
    ToolCallFinished,
    ToolCallStarted,
    Trigger,
    TurnFinished,
)
from forge.agent.headless_output import JsonLinesWriter, TextWriter
from forge.llm.messages import ToolCall, assistant

SECRET = "sk-headless-output-SECRET-42"
CALL = ToolCall("call_1", "execute_command", '{"command": "make"}')

CONTEXT_EVENTS: list[AgentEvent] = [
    ContextWarning(86_000, 100_000, 0.85),
    SummarizationStarted("r1", "tool_call", Trigger.AUTO, "gpt-4o-mini", 86_000, 100_000, 4),
    SummarizationProgress("r1", "tool_call", 1, 4),
    SummarizationProgress("r1", "tool_call", 4, 4),
    SummarizationCompleted("r1", "tool_call", "gpt-4o-mini", 4, 86_000, 30_000, 2.5, 4),
    SummarizationFailed("r2", "threshold", "gpt-4o-mini", "server error", "prune", 0, 9, 9),
]


def text_writer() -> tuple[TextWriter, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return TextWriter(out, err, [SECRET], describe=lambda call: "make"), out, err


def test_each_context_event_is_one_readable_line() -> None:
    writer, out, _ = text_writer()
    writer.event(MessageDelta("thinking about it"))  # mid-line when the events arrive
    for event in CONTEXT_EVENTS:
        writer.event(event)
    writer.event(ContextUsage(30_000, 100_000))  # a gauge update: nothing to print
    lines = out.getvalue().splitlines()
    assert lines[0] == "thinking about it"
    assert len(lines) == 1 + len(CONTEXT_EVENTS)
    assert all(line.startswith("[context] ") for line in lines[1:])
    assert "86%" in lines[1]
    assert "summarizing 4 item(s) with gpt-4o-mini (tool_call, auto)" in lines[2]
    assert lines[3] == "[context] tool_call: 1/4 done"
    assert "86,000 → 30,000 tokens" in lines[5]
    assert "fallback: prune" in lines[6]


def test_answer_tool_lines_and_endings() -> None:
    writer, out, err = text_writer()
    for event in (
        MessageDelta("Running "),
        MessageDelta("make."),
        AssistantMessageDone(assistant("Running make.", tool_calls=(CALL,))),
        ToolCallStarted(CALL),
        ToolCallFinished(CALL, f"error: token {SECRET}\n[exit code 2]", True, 2),
        ErrorEvent(f"bad key {SECRET}", "authentication", fatal=True),
        TurnFinished("error"),
    ):
        writer.event(event)
    writer.approval_decided(CALL, ApprovalDecision(ApprovalVerdict.REJECT, "no builds"))
    lines = out.getvalue().splitlines()
    assert lines[:3] == ["Running make.", "→ make", "  ✗ error: token *** (exit 2)"]
    assert lines[3] == "■ stopped (error)"
    assert lines[4] == "✗ rejected make: no builds"
    assert err.getvalue() == "forge: error (authentication): bad key ***\n"
    assert SECRET not in out.getvalue() + err.getvalue()


def test_converse_reply_is_printed_but_a_streamed_answer_is_not_repeated() -> None:
    writer, out, _ = text_writer()
    writer.event(MessageDelta("Hello."))
    writer.event(AssistantMessageDone(assistant("Hello.")))
    writer.event(TurnFinished("answered", "Hello."))
    assert out.getvalue().splitlines() == ["Hello.", "✔ answered"]
    writer, out, _ = text_writer()
    writer.event(TurnFinished("answered", "A converse reply."))
    assert out.getvalue().splitlines() == ["A converse reply.", "✔ answered"]


def test_jsonl_writer_masks_secrets_and_writes_one_object_per_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err, [SECRET])
    for event in [*CONTEXT_EVENTS, MessageDelta(f"key {SECRET}\nsecond line")]:
        writer.event(event)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(CONTEXT_EVENTS) + 1
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records[:2]] == ["context_warning", "summarization_started"]
    assert records[-1]["text"] == "key ***\nsecond line"
    assert SECRET not in out.getvalue()


def test_a_timeout_mid_answer_starts_its_error_on_a_new_line_and_keeps_the_partial_text() -> None:
    writer, out, err = text_writer()
    writer.event(MessageDelta("This is a slow strea"))
    writer.timed_out(2)
    assert out.getvalue().endswith("strea\n")  # the answer's line closed before the error
    assert err.getvalue() == "forge: error (timeout): no result after 2 seconds\n"
    jsonl, jsonl_err = io.StringIO(), io.StringIO()
    records = JsonLinesWriter(jsonl, jsonl_err)
    records.event(AssistantMessageDone(assistant("a finished answer")))
    records.event(MessageDelta("This is a slow "))
    records.event(MessageDelta("strea"))
    records.timed_out(2)
    finished = json.loads(jsonl.getvalue().splitlines()[-1])
    assert finished == {
        "type": "turn_finished",
        "reason": "timeout",
        "final_text": "This is a slow strea",
    }


def test_an_error_mid_answer_starts_on_a_new_line() -> None:
    writer, out, _ = text_writer()
    writer.event(MessageDelta("half an ans"))
    writer.event(ErrorEvent("server_error", "the server failed", fatal=True))
    assert out.getvalue() == "half an ans\n"
