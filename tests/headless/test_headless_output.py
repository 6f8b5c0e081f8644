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
from forge.headless.output import JsonLinesWriter, TextWriter
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


def test_each_context_event_is_one_readable_line_on_stderr() -> None:
    writer, out, err = text_writer()
    writer.event(MessageDelta("thinking about it"))  # text mode does not stream the answer
    for event in CONTEXT_EVENTS:
        writer.event(event)
    writer.event(ContextUsage(30_000, 100_000))  # a gauge update: nothing to print
    assert out.getvalue() == ""  # stdout holds the final answer only
    lines = err.getvalue().splitlines()
    assert len(lines) == len(CONTEXT_EVENTS)
    assert all(line.startswith("[context] ") for line in lines)
    assert "86%" in lines[0]
    assert "summarizing 4 item(s) with gpt-4o-mini (tool_call, auto)" in lines[1]
    assert lines[2] == "[context] tool_call: 1/4 done"
    assert "86,000 → 30,000 tokens" in lines[4]
    assert "fallback: prune" in lines[5]


def test_progress_on_stderr_and_the_final_answer_alone_on_stdout() -> None:
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
    writer.finish({"result": f"Final {SECRET}"})
    lines = err.getvalue().splitlines()
    assert lines == [
        "Running make.",
        "→ make",
        "  ✗ error: token *** (exit 2)",
        "forge: error (authentication): bad key ***",
        "■ stopped (error)",
        "✗ not allowed make: no builds",
    ]
    assert out.getvalue() == "Final ***\n"
    assert SECRET not in out.getvalue() + err.getvalue()


def test_a_run_without_a_final_answer_prints_nothing_on_stdout() -> None:
    writer, out, err = text_writer()
    writer.event(TurnFinished("answered", "A converse reply."))
    writer.finish({"result": ""})
    assert out.getvalue() == "" and err.getvalue().splitlines() == ["✔ answered"]


def test_jsonl_writer_masks_secrets_and_writes_one_object_per_line() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err, [SECRET])
    for event in [*CONTEXT_EVENTS, MessageDelta(f"key {SECRET}\nsecond line")]:
        writer.event(event)
    assert out.getvalue() == ""  # held until the init record
    writer.init({"type": "init"})
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 + len(CONTEXT_EVENTS) + 1
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records[:3]] == ["init", "context_warning", "summarization_started"]
    assert records[-1]["text"] == "key ***\nsecond line"
    assert SECRET not in out.getvalue()


def test_a_result_before_init_writes_the_early_init_first() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err)
    writer.early_init = {"type": "init", "tools": ["read_file"]}
    writer.interrupted("SIGTERM")
    writer.finish({"type": "result", "subtype": "error_signal"})
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["type"] for r in records] == ["init", "turn_finished", "result"]
    assert records[1]["reason"] == "signal"
    assert "interrupted (SIGTERM)" in err.getvalue()


def test_a_refused_call_gets_a_started_record_before_its_finished_one() -> None:
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err)
    writer.init({"type": "init"})
    writer.event(ToolCallFinished(CALL, "not allowed", True, None, {"rejected": True}))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["type"] for r in records] == ["init", "tool_call_started", "tool_call_finished"]
    assert records[1]["call_id"] == records[2]["call_id"] == "call_1"


def test_a_timeout_mid_answer_keeps_the_partial_text() -> None:
    writer, out, err = text_writer()
    writer.event(MessageDelta("This is a slow strea"))
    writer.timed_out(2)
    assert out.getvalue() == ""
    assert err.getvalue() == "forge: error (timeout): no result after 2 seconds\n"
    jsonl, jsonl_err = io.StringIO(), io.StringIO()
    records = JsonLinesWriter(jsonl, jsonl_err)
    records.init({"type": "init"})
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
