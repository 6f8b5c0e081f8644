"""Token counts from a server or a session file are data (issue 20, docs/adr/0036): counts
outside 0…10⁹, or cached above prompt, are ignored with a log line; no cost goes below $0 and
nothing crashes. Real `forge run` subprocesses against the loopback server, a real resumed
session file, and the parser and ledger directly."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from forge.agent.costs import CostLedger
from forge.agent.history.session_file import SessionStore
from forge.config.prices import ModelPrice, PriceTable
from forge.llm.stream import Usage
from forge.llm.wire_format import parse_usage
from tests.headless.test_headless import forge_run, jsonl
from tests.headless.test_headless_sessions import forge
from tests.support.openai_server import OpenAIServer, Raw, Text

HUGE = 10**400
PRICES = PriceTable({"gpt-4o": ModelPrice("gpt-4o", 2.50, 1.25, 10.0)})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prompt_tokens", HUGE),
        ("prompt_tokens", -5),
        ("prompt_tokens", 10**9 + 1),
        ("prompt_tokens", 12.5),
        ("prompt_tokens", True),
        ("prompt_tokens", "100"),
    ],
)
def test_an_untrusted_prompt_count_means_no_usage_with_a_log_line(
    field: str, value: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "forge.llm.usage"):
        assert parse_usage({field: value, "completion_tokens": 10}) is None
    if not isinstance(value, str | float | bool):
        assert "Ignored the server's usage prompt_tokens" in caplog.text
    assert len(caplog.text) < 500  # the log line does not carry the 400 digits


def test_other_untrusted_counts_are_dropped_and_cached_never_exceeds_prompt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "forge.llm.usage"):
        usage = parse_usage(
            {
                "prompt_tokens": 1_000,
                "completion_tokens": 7,
                "total_tokens": -1,
                "prompt_tokens_details": {"cached_tokens": 500_000_000},
                "completion_tokens_details": {"reasoning_tokens": HUGE},
            }
        )
        # An untrusted completion count fails the whole report: the request is estimated
        # from Forge's own counts instead of costing nothing (issue 34).
        unreported = parse_usage({"prompt_tokens": 1_000, "completion_tokens": HUGE})
    assert usage == Usage(prompt_tokens=1_000, completion_tokens=7, total_tokens=1_007)
    assert unreported is None
    assert "completion_tokens" in caplog.text and "500000000 cached of 1000 prompt" in caplog.text
    assert parse_usage({"prompt_tokens": 10**9, "prompt_tokens_details": {"cached_tokens": 10**9}})


def test_the_ledger_refuses_an_untrusted_usage_and_a_cost_is_never_negative() -> None:
    ledger = CostLedger()
    ledger.record_agent("gpt-4o", Usage(prompt_tokens=HUGE, completion_tokens=1))
    ledger.record_agent("gpt-4o", Usage(prompt_tokens=10, cached_tokens=1_000_000_000))
    report = ledger.report(PRICES)
    assert report.dollars() is not None and report.dollars() >= 0
    assert PRICES.lookup("gpt-4o").cost(-(10**9), HUGE, -1) >= 0  # type: ignore[union-attr]


def test_a_session_cost_record_with_untrusted_numbers_counts_them_as_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    record = {
        "agent": {
            "gpt-4o": {"requests": 1, "prompt": HUGE, "cached": 0, "output": 10},
            "gpt-4o-mini": {"requests": 1, "prompt": 10, "cached": 1_000_000_000, "output": 1},
        },
        "summarization": {"x": {"requests": -1, "prompt": 1.5, "cached": "a", "output": 0}},
        "removed_tokens": HUGE,
        "saved_tokens": {"gpt-4o": HUGE},
        "sent_tokens": -3,
    }
    with caplog.at_level(logging.WARNING, "forge.agent.costs"):
        ledger = CostLedger.from_record(record)
    report = ledger.report(PRICES)
    assert ledger.agent["gpt-4o"].prompt == 0 and ledger.agent["gpt-4o-mini"].cached == 0
    assert ledger.removed_tokens == 0 and ledger.sent_tokens == 0
    assert all(line.dollars is None or line.dollars >= 0 for line in report.lines)
    assert "Ignored the session's cost record prompt" in caplog.text


def test_forge_run_survives_a_400_digit_prompt_count_and_cached_above_prompt(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("first", prompt_tokens=HUGE, completion_tokens=5),
        Text("second", prompt_tokens=1_000, completion_tokens=5, cached_tokens=500_000_000),
    )
    first = forge_run(llm_server, workspace, "--model", "gpt-4o", "--output", "jsonl", "hi")
    second = forge_run(llm_server, workspace, "--model", "gpt-4o", "--output", "jsonl", "hi")

    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    # The untrusted usage is replaced by Forge's own count of the request (issue 34).
    first_cost = jsonl(first)[-1]["cost"]
    assert first_cost["estimated"] is True and 0 < first_cost["total"] < 0.05
    cost = jsonl(second)[-1]["cost"]
    (model,) = cost["models"]
    assert model["input_tokens"] == 1_000 and model["cached_tokens"] == 0
    assert cost["total"] == pytest.approx((1_000 * 2.50 + 5 * 10.0) / 1e6)


def test_resuming_a_session_whose_cost_record_holds_400_digits(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("one", prompt_tokens=100, completion_tokens=5))
    made = forge(llm_server, workspace, "run", "--model", "gpt-4o", "--output", "jsonl", "hi")
    assert made.returncode == 0, made.stderr
    (path,) = SessionStore().directory.glob("*.jsonl")
    ledger = {
        "agent": {"gpt-4o": {"requests": 1, "prompt": HUGE, "cached": HUGE * 2, "output": 1}},
        "removed_tokens": HUGE,
        "saved_tokens": {"gpt-4o": HUGE},
        "sent_tokens": HUGE,
    }
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "costs", "ledger": ledger}) + "\n")

    llm_server.enqueue(Text("two", prompt_tokens=100, completion_tokens=5))
    resumed = forge(
        llm_server, workspace, "--continue", "run", "--model", "gpt-4o", "--output", "jsonl", "go"
    )
    assert resumed.returncode == 0, resumed.stderr
    cost = jsonl(resumed)[-1]["cost"]
    assert cost["total"] is not None and cost["total"] >= 0


def test_a_number_beyond_pythons_digit_limit_is_a_malformed_stream_not_a_crash(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    chunk = {
        "id": "x",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": None}],
    }
    usage = json.dumps({**chunk, "choices": [], "usage": {"prompt_tokens": 1}})
    usage = usage.replace('"prompt_tokens": 1', '"prompt_tokens": ' + "9" * 5000)
    body = f"data: {json.dumps(chunk)}\n\ndata: {usage}\n\ndata: [DONE]\n\n".encode()
    llm_server.enqueue(Raw(body))
    result = forge_run(llm_server, workspace, "--model", "gpt-4o", "hi")
    assert result.returncode == 1
    assert "a number too long to read" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_session_line_with_a_5000_digit_number_is_skipped_on_resume(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(Text("one", prompt_tokens=100, completion_tokens=5))
    made = forge(llm_server, workspace, "run", "--model", "gpt-4o", "--output", "jsonl", "hi")
    assert made.returncode == 0, made.stderr
    (path,) = SessionStore().directory.glob("*.jsonl")
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "costs", "ledger": {"sent_tokens": ' + "7" * 5000 + "}}\n")
    llm_server.enqueue(Text("two", prompt_tokens=100, completion_tokens=5))
    resumed = forge(llm_server, workspace, "--continue", "run", "--output", "jsonl", "go")
    assert resumed.returncode == 0, resumed.stderr
    assert jsonl(resumed)[-1]["reason"] == "answered"
