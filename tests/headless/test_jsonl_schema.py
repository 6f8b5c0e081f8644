"""The jsonl records of `forge run` match their documentation (docs/adr/0015-headless-output.md).

Every agent event type (and every record the headless writer adds itself) must map to a
documented `type` with exactly the documented fields, and every documented row must still be
produced, so neither the code nor the table can drift alone.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path
from typing import Any

from forge.agent.costs import CostLedger
from forge.agent.error_kinds import ERROR_KINDS
from forge.agent.events import (
    ApprovalDecision,
    ApprovalVerdict,
    QuestionAsked,
    RetryScheduled,
    SubagentEvent,
    SummarizationStarted,
    Trigger,
    UsageEvent,
)
from forge.agent.mcp.notices import McpServerNotice
from forge.agent.trust import ProgramSource, TrustStatus, WorkspaceProgram
from forge.config.prices import price_table
from forge.headless.exit_status import ending_for
from forge.headless.jsonl import event_to_dict, has_record
from forge.headless.output import JsonLinesWriter
from forge.headless.result import RunRecorder, make_init_record
from forge.llm.stream import Usage
from forge.session.background_follow import BackgroundEnded, BackgroundLines
from forge.session.events import AttachmentsAdded
from tests.support.session_events import CALL, event_classes, sample_events

ADR = Path(__file__).resolve().parents[2] / "docs" / "adr" / "0015-headless-output.md"


WRITER_FIELDS = {"turn_finished": {"cost"}}
"""Fields the jsonl writer adds to an event's record (the session's cost, ADR 0029)."""


def documented_records() -> dict[str, set[str]]:
    """`type` → field names, parsed from the ADR's table (`| type | fields |`)."""
    table: dict[str, set[str]] = {}
    for line in ADR.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or cells[0] in ("type", "") or set(cells[0]) <= {"-"}:
            continue
        # Drop the explanations in parentheses and the nested shapes in brackets.
        fields_text = re.sub(r"\[[^\]]*\]|\([^)]*\)", "", cells[1])
        fields = {name.strip() for name in fields_text.split(",") if name.strip()}
        for record_type in cells[0].split("/"):
            table[record_type.strip()] = fields
    return table


def documented_error_kinds() -> set[str]:
    text = ADR.read_text(encoding="utf-8")
    listed = text.split("Error kinds:", 1)[1].split(".", 1)[0]
    return {kind.strip() for kind in listed.replace("\n", " ").split(",")}


CHILD_FIELDS = {"agent", "parent_call_id"}
"""Fields a child agent's record has beside its event's (ADR 0015's addendum, ADR 0045)."""


async def test_every_event_type_has_a_sample() -> None:
    """A new event type must be added to the samples, and so to the documentation check
    below and to every front end's dispatch test."""
    assert {type(event) for event in sample_events()} == event_classes()


async def test_every_event_maps_to_a_documented_type_with_exactly_its_fields() -> None:
    table = documented_records()
    for event in sample_events():
        if not has_record(event):
            # retries were never records (ADR 0015); the attachments are said on stderr
            assert type(event) in (RetryScheduled, AttachmentsAdded)
            continue
        record = event_to_dict(event)
        record_type = record.pop("type")
        if isinstance(event, SubagentEvent):
            assert record.pop("agent") == event.agent
            assert record.pop("parent_call_id") == event.call_id
        assert record_type in table, f"{type(event).__name__} → {record_type!r} is undocumented"
        assert set(record) == table[record_type] - WRITER_FIELDS.get(record_type, set()), (
            record_type
        )
        json.dumps(record)  # plain JSON: no futures, enums or dataclasses left


async def test_writer_records_are_documented_and_every_row_is_produced() -> None:
    table = documented_records()
    out, err = io.StringIO(), io.StringIO()
    writer = JsonLinesWriter(out, err)
    writer.cost_report = lambda: CostLedger().report(price_table())
    writer.init(make_init_record("20250101-000000-abcdef", "gpt-4o-mini", [], "ask", "/work"))
    writer.run_started("20250101-000000-abcdef", "gpt-4o-mini", "/work")
    for event in sample_events():
        writer.event(event)
    writer.approval_decided(CALL, ApprovalDecision(ApprovalVerdict.REJECT, "no"))
    writer.background(BackgroundLines(CALL.id, "bg1", "line1\n"))  # ADR 0057
    writer.background(BackgroundEnded(CALL.id, "bg1", "exited 0", 0))
    writer.mcp_notice(McpServerNotice("github", "start_failed", "command not found 'npx'"))
    source = ProgramSource(".forge/mcp.yaml", (WorkspaceProgram("x", "sh -c 'echo'"),), "f")
    writer.workspace_untrusted(source, TrustStatus.UNDECIDED)
    writer.timed_out(3)
    recorder = RunRecorder(
        CostLedger, price_table(), agent_requests=lambda: 0, describe=lambda call: call.name
    )
    writer.finish(recorder.result(ending_for("timeout"), "20250101-000000-abcdef"))
    records: list[dict[str, Any]] = [json.loads(line) for line in out.getvalue().splitlines()]
    produced: set[str] = set()
    for record in records:
        record_type = record.pop("type")
        produced.add(record_type)
        if "parent_call_id" in record:  # a child's record (ADR 0045)
            for name in CHILD_FIELDS:
                record.pop(name)
        assert record_type in table, f"{record_type!r} is undocumented"
        assert set(record) == table[record_type], record_type
    assert produced == set(table), f"documented but never produced: {set(table) - produced}"
    assert "forge: error (server_error): boom" in err.getvalue()
    assert (
        "forge run: MCP server github failed to start: command not found 'npx'. "
        "Its tools are unavailable.\n" in err.getvalue()
    )


def test_every_error_kind_is_documented() -> None:
    documented = documented_error_kinds()
    assert documented == ERROR_KINDS


def test_usage_record_holds_every_usage_field() -> None:
    record = event_to_dict(UsageEvent(Usage(1, 2, 3, 4, 5, 8), 6, 7))
    assert record == {
        "type": "usage",
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "total_tokens": 3,
        "cached_tokens": 4,
        "reasoning_tokens": 5,
        "cache_write_tokens": 8,
        "session_prompt_tokens": 6,
        "session_completion_tokens": 7,
    }


async def test_a_retry_writes_no_record() -> None:
    out = io.StringIO()
    writer = JsonLinesWriter(out, io.StringIO())
    writer.init({"type": "init"})
    writer.event(RetryScheduled(1, 4, 0.5, "rate_limited", "slow down", 429, "m"))
    assert out.getvalue().splitlines() == ['{"type": "init"}']


async def test_trigger_is_written_as_its_plain_value() -> None:
    started = SummarizationStarted("r", "threshold", Trigger.OVERFLOW, "m", 1, 2, 3)
    assert event_to_dict(started)["trigger"] == "overflow"
    future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    assert "future" not in event_to_dict(QuestionAsked("q", future=future))
