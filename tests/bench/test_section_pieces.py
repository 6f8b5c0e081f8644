"""Pieces of the parallel, bookkeeping and TUI sections: case lists, limits, conversations,
the SSE parsing of the minimal app, and the minimal app itself streaming from the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Input, Markdown

from bench.bookkeeping import (
    awaits_results,
    measure_size,
    message_stream,
    quiet_settings,
    take_valid,
)
from bench.minimal_app import MinimalApp, content_of
from bench.parallel import (
    Case,
    _add_row,
    concurrencies,
    conversation_with_groups,
    judge,
    limit_seconds,
    measure,
    target_seconds,
)
from bench.results import SectionResult, Table
from bench.server_process import ServerProcess
from bench.startup import import_tree
from forge.config.settings import ContextSettings
from forge.llm.messages import Message, ToolCall
from tests.bench.sessions_support import tool_session


def test_concurrencies_are_one_five_and_n_without_repeats() -> None:
    assert concurrencies(1) == [1]
    assert concurrencies(4) == [1, 4]
    assert concurrencies(12) == [1, 5, 12]
    assert concurrencies(40) == [1, 5, 40]


def test_the_limit_is_whole_waves_of_one_latency() -> None:
    assert limit_seconds(12, 5, 0.1) == pytest.approx(0.3)
    assert limit_seconds(40, 40, 0.2) == 0.2
    assert limit_seconds(4, 1, 0.5) == 2.0


def test_the_parallel_conversation_is_valid_with_one_group_per_text() -> None:
    conversation = conversation_with_groups(["first output", "second output"])
    assert conversation.is_valid()
    assert sum(1 for m in conversation.messages if m.tool_calls) == 2
    assert conversation.messages[-1].role == "user"


def _group(call_id: str) -> list[Message]:
    call = ToolCall(id=call_id, name="read_file")
    return [
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="x", tool_call_id=call_id, name="read_file"),
    ]


def test_a_cut_never_leaves_a_call_without_its_result() -> None:
    session = [Message(role="user", content="task"), *_group("a"), *_group("b")]
    assert awaits_results(session[:2])
    assert not awaits_results(session[:3])
    taken = take_valid(message_stream([session]), 2)
    assert len(taken) == 3
    assert not awaits_results(taken)


def test_copies_of_a_session_get_distinct_tool_call_ids() -> None:
    session = [Message(role="user", content="task"), *_group("a")]
    messages = take_valid(message_stream([session]), 6)
    ids = [m.tool_calls[0].id for m in messages if m.tool_calls]
    assert len(ids) == len(set(ids)) == 2


def test_the_bookkeeping_settings_keep_every_trigger_out_of_reach() -> None:
    settings = quiet_settings()
    assert settings.max_tokens is not None and settings.max_tokens >= 10**9
    assert settings.min_tool_calls_to_summarize >= 10**9


def test_the_bookkeeping_masking_variant_keeps_the_default_batch_only() -> None:
    settings = quiet_settings(masking=True)
    assert settings.mask_batch == ContextSettings().mask_batch
    assert settings.mask_keep_recent == ContextSettings().mask_keep_recent
    assert settings.min_tool_calls_to_summarize >= 10**9
    assert quiet_settings().mask_batch >= 10**9


async def test_bookkeeping_with_masking_sees_masking_fire_and_nothing_else() -> None:
    sessions = [tool_session(30, output_words=40)]
    *_, masked, problems = await measure_size(200, sessions, masking=True)
    assert problems == []  # masking fired (else a problem) and no other strategy did
    assert masked > 0  # some timed calls included a masking run
    *_, unmasked, quiet = await measure_size(200, sessions)
    assert (unmasked, quiet) == (0, [])


def test_sse_lines_give_the_answer_pieces_and_the_end() -> None:
    line = 'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}'
    assert content_of(line) == "Hel"
    assert content_of('data: {"choices": [], "usage": {"prompt_tokens": 3}}') == ""
    assert content_of(": keep-alive") == ""
    assert content_of("data: not json") == ""
    assert content_of("data: [DONE]") is None


def test_the_minimal_app_streams_the_answer_into_its_markdown(tmp_path: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("# Title\n\n- one\n- two\n\nThe last line.\n", encoding="utf-8")

    async def scenario(base_url: str) -> str:
        app = MinimalApp(base_url, "gpt-4o")
        async with app.run_test() as pilot:
            app.query_one(Input).value = "go"
            await pilot.press("enter")
            for _ in range(200):
                await pilot.pause(0.05)
                if "The last line." in app.query_one(Markdown).source:
                    break
            return app.query_one(Markdown).source

    with ServerProcess(mode="stream", text_file=answer, tokens_per_second=2000) as server:
        source = asyncio.run(scenario(server.base_url))
    assert source.startswith("# Title")
    assert "The last line." in source


IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |     _io
import time:      2000 |       5000 |   forge.config
import time:      1000 |       1000 |     yaml
import time:      3000 |      20000 | forge.tui.app
"""


def test_importtime_output_parses_into_modules_depths_and_seconds() -> None:
    assert import_tree(IMPORTTIME) == [
        ("_io", 2, 0.0001),
        ("forge.config", 1, 0.005),
        ("yaml", 2, 0.001),
        ("forge.tui.app", 0, 0.02),
    ]


def test_parallel_targets_are_one_wave_within_115_percent_and_each_wave_within_10_ms() -> None:
    assert target_seconds(1, 0.1) == pytest.approx(0.135)
    assert target_seconds(4, 0.1) == pytest.approx(0.44)
    assert target_seconds(40, 0.1) == pytest.approx(4.4)


def test_a_peak_in_flight_below_what_c_allows_is_a_violation() -> None:
    held_back = Case(groups=4, concurrency=4, seconds=0.1, requests=4, peak_in_flight=3,
                     summarized=4)  # fmt: skip
    assert any("fewer than min(requests, c) = 4" in v for v in judge(held_back, 1, 0.1))
    whole = Case(groups=4, concurrency=4, seconds=0.1, requests=4, peak_in_flight=4, summarized=4)
    assert judge(whole, 1, 0.1) == []
    too_many = Case(groups=4, concurrency=2, seconds=0.1, requests=4, peak_in_flight=3,
                    summarized=4)  # fmt: skip
    assert any("more than max_concurrent_summaries=2" in v for v in judge(too_many, 2, 0.1))


def test_the_parallel_section_fails_a_summarizer_slower_than_its_latency() -> None:
    """A summarizer deliberately slowed (the server takes 0.3 s per request while the section
    judges L = 0.05 s) breaks the ratio target, and the section reports a violation."""
    texts = ["A line of tool output that is long enough to be summarized. " * 40] * 2
    result = SectionResult("parallel", "2. Parallel summarization", "test", [])
    table = Table("slowed", ("N", "c", "wall", "limit", "/ limit", "seq", "/ seq", "req", "peak"))
    with ServerProcess(mode="summarizer", latency=0.3) as server:
        case = measure(server, texts, 2, runs=1)
    _add_row(table, case, 1, result, latency=0.05)
    assert case.peak_in_flight == 2 and case.summarized == 2
    assert any("above the target" in violation for violation in result.violations)
    assert "!! > target" in table.rows[0][4]
