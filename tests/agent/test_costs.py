"""Cost in money (docs/adr/0029): the arithmetic, unknown models, the price table's lookup,
and the ledger fed by real requests to the loopback server (cached tokens, summaries)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from forge.agent.costs import CostLedger, format_dollars
from forge.config.prices import DEFAULT_PRICES, ModelPrice, PriceTable, price_table
from forge.config.settings import LLMSettings, Settings
from forge.context.events import SummarizationCompleted
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import StreamFinished, Usage
from forge.session.build import SessionOptions, build_session
from tests.agent.loop_harness import drive
from tests.support.openai_server import Call, OpenAIServer, RecordedRequest, Text, ToolCalls

PRICES = PriceTable(
    {"main": ModelPrice("main", 2.0, 0.5, 8.0), "cheap": ModelPrice("cheap", 0.2, 0.1, 0.8)}
)


def test_cached_tokens_are_priced_at_the_cached_price() -> None:
    ledger = CostLedger()
    ledger.record_agent(
        "main", Usage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=400_000)
    )
    report = ledger.report(PRICES)
    # 600k uncached at $2, 400k cached at $0.50, 500k out at $8
    assert report.dollars("agent") == pytest.approx(1.2 + 0.2 + 4.0)
    assert report.dollars("summarization") == 0.0
    (line,) = report.lines
    assert (line.prompt, line.cached, line.output, line.requests) == (
        1_000_000,
        400_000,
        500_000,
        1,
    )


def test_agent_and_summarization_are_summed_apart() -> None:
    ledger = CostLedger()
    ledger.record_agent("main", Usage(prompt_tokens=100_000, completion_tokens=10_000))
    ledger.record_agent("main", Usage(prompt_tokens=100_000, completion_tokens=10_000))
    ledger.record_summary("cheap", Usage(prompt_tokens=1_000_000, completion_tokens=100_000))
    report = ledger.report(PRICES)
    assert report.dollars("agent") == pytest.approx(2 * (0.2 + 0.08))
    assert report.dollars("summarization") == pytest.approx(0.2 + 0.08)
    assert report.dollars() == pytest.approx(0.56 + 0.28)
    assert report.lines[0].requests == 2


def test_an_unknown_model_makes_its_sums_unknown_never_a_guess() -> None:
    ledger = CostLedger()
    ledger.record_agent("main", Usage(prompt_tokens=1000, completion_tokens=10))
    ledger.record_summary("local-llama", Usage(prompt_tokens=1000, completion_tokens=10))
    report = ledger.report(PRICES)
    assert report.dollars("agent") is not None
    assert report.dollars("summarization") is None and report.dollars() is None
    assert format_dollars(report.dollars()) == "unknown"
    data = report.to_dict()
    assert data["summarization"] is None and data["total"] is None
    assert data["models"][1]["dollars"] is None
    assert "unknown" in report.summary_line() and "unknown" in report.details_markdown()
    # What the priced model cost still shows beside the unknown part.
    agent_dollars = format_dollars(report.dollars("agent"))
    assert report.shown() == f"{agent_dollars} + unknown"
    assert report.shown("agent") == agent_dollars
    assert report.shown("summarization", unknown="?") == "?"
    assert f"Session cost: {agent_dollars} + unknown" in report.details_markdown()


def test_format_dollars() -> None:
    assert format_dollars(1.234) == "$1.23"
    assert format_dollars(0.0042) == "$0.0042"
    assert format_dollars(0.0) == "$0.00"
    assert format_dollars(0.0, precise=True) == "$0.0000"
    # A child's 204 tokens in and 5 out on gpt-4o-mini (the 80x24 tryout's /cost row).
    assert format_dollars(0.0000336, precise=True) == "<$0.0001"
    assert format_dollars(None) == "unknown"


def test_lookup_knows_dated_and_prefixed_names_but_nothing_else() -> None:
    table = price_table()
    assert table.lookup("gpt-4o-2024-08-06") == DEFAULT_PRICES["gpt-4o"]
    assert table.lookup("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    assert table.lookup("openai/gpt-4.1-mini") == DEFAULT_PRICES["gpt-4.1-mini"]
    assert table.lookup("gpt-4o-audio-preview") is None  # a different model, not a date
    assert table.lookup("qwen2.5-coder:7b") is None
    assert "gpt-5" in table and "llama3" not in table


def test_config_entries_add_models_and_replace_defaults() -> None:
    settings = Settings(
        prices={
            "qwen2.5-coder": {"input": 0.0, "output": 0.0},
            "gpt-4o": {"input": 3.0, "cached_input": 1.0, "output": 12.0},
            "no-cache-price": {"input": 1.0, "output": 2.0},
        }
    )
    table = price_table(settings.prices)
    assert table.lookup("qwen2.5-coder") == ModelPrice("qwen2.5-coder", 0.0, 0.0, 0.0)
    assert table.lookup("gpt-4o") == ModelPrice("gpt-4o", 3.0, 1.0, 12.0)
    assert table.lookup("gpt-4o-mini") == DEFAULT_PRICES["gpt-4o-mini"]
    # No cached price given: cached tokens cost the input price.
    assert table.lookup("no-cache-price") == ModelPrice("no-cache-price", 1.0, 1.0, 2.0)
    with pytest.raises(ValueError):
        Settings(prices={"x": {"input": -1, "output": 1}})


def test_the_benchmark_uses_the_apps_table() -> None:
    from bench.prices import MAIN, SUMMARIZATION

    assert MAIN is DEFAULT_PRICES["gpt-4o"] and SUMMARIZATION is DEFAULT_PRICES["gpt-4o-mini"]


def test_compaction_saving_counts_removed_tokens_on_every_later_request() -> None:
    ledger = CostLedger()
    ledger.record_agent("main", Usage(prompt_tokens=50_000, completion_tokens=0))
    ledger.observe(SummarizationCompleted("r1", "threshold", "cheap", 3, 50_000, 10_000, 1.0, 1))
    ledger.record_agent("main", Usage(prompt_tokens=12_000, completion_tokens=0))
    ledger.observe(SummarizationCompleted("r2", "masking", "none", 2, 20_000, 15_000, 0.0, 0))
    ledger.record_agent("main", Usage(prompt_tokens=16_000, completion_tokens=0))
    report = ledger.report(PRICES)
    assert report.saved_tokens == 40_000 + 45_000
    assert report.sent_tokens == 78_000
    assert report.saved_dollars == pytest.approx(85_000 * 2.0 / 1_000_000)
    assert "Estimate:" in report.details_markdown()


def test_the_saving_says_what_compaction_removed_and_what_the_requests_sent_instead() -> None:
    ledger = CostLedger()
    ledger.record_agent("main", Usage(prompt_tokens=20_000, completion_tokens=0))
    ledger.observe(SummarizationCompleted("r1", "threshold", "cheap", 6, 30_000, 17_350, 1.0, 1))
    ledger.record_agent("main", Usage(prompt_tokens=3_193, completion_tokens=0))
    ledger.record_agent("main", Usage(prompt_tokens=0, completion_tokens=0))
    ledger.record_summary("cheap", Usage(prompt_tokens=10_000, completion_tokens=500))
    sentence = ledger.report(PRICES).saving_sentence()
    assert sentence.startswith(
        "Compaction removed **25,300** tokens from later requests: they sent 23,193 prompt "
        "tokens instead of 48,493."
    )
    assert "**$0.05** saved, against $0.0024 spent on summarization." in sentence


def test_a_missing_price_is_unknown_in_the_saving_never_zero_dollars() -> None:
    """A local model: the saving and the summarization spending are "unknown", not $0.00."""
    ledger = CostLedger()
    ledger.record_agent("local-llama", Usage(prompt_tokens=20_000, completion_tokens=10))
    ledger.observe(SummarizationCompleted("r1", "threshold", "local", 6, 30_000, 4_700, 1.0, 1))
    ledger.record_agent("local-llama", Usage(prompt_tokens=5_000, completion_tokens=10))
    ledger.record_summary("local-llama", Usage(prompt_tokens=9_000, completion_tokens=300))
    details = ledger.report(PRICES).details_markdown()
    assert "About **unknown** saved, against unknown spent on summarization." in details
    assert "$0.00" not in details


def test_without_compaction_or_summaries_the_saving_names_no_dollars() -> None:
    ledger = CostLedger()
    ledger.record_agent("local-llama", Usage(prompt_tokens=2_000, completion_tokens=10))
    sentence = ledger.report(PRICES).saving_sentence()
    assert sentence == (
        "Compaction has not removed tokens from any request yet (no summarization requests)."
    )
    details = ledger.report(PRICES).details_markdown()
    assert "(agent unknown, summarization no requests yet;" in details
    assert "$0.00" not in details
    assert "Session cost: no requests yet" in CostLedger().report(PRICES).details_markdown()
    # Masking alone (no LLM call) removed tokens: no summarization dollars to set against.
    ledger.observe(SummarizationCompleted("r1", "masking", "none", 3, 9_000, 6_000, 0.0, 0))
    assert ledger.report(PRICES).saving_sentence() == (
        "Compaction removed **3,000** tokens from the conversation; no request has been sent "
        "since (no summarization requests)."
    )
    ledger.record_agent("main", Usage(prompt_tokens=1_000, completion_tokens=10))
    assert (
        ledger.report(PRICES)
        .saving_sentence()
        .endswith("About **$0.0060** saved, against no summarization requests.")
    )


def test_narrow_details_give_each_model_one_block_with_every_figure() -> None:
    ledger = CostLedger()
    ledger.record_agent("main", Usage(23_193, 900, 24_093, cached_tokens=1_000))
    ledger.record_summary("local-llama", Usage(12_000, 800, 12_800))
    report = ledger.report(PRICES)
    narrow = report.details_markdown(narrow=True)
    assert "| kind |" not in narrow and "| kind |" in report.details_markdown()
    assert report.blocks_markdown().splitlines() == [
        "- **agent** `main`: **$0.0521** · 1 request · 23,193 in (1,000 cached) · 900 out",
        "- **summarization** `local-llama`: **unknown** · 1 request · 12,000 in (0 cached) · "
        "800 out",
    ]


def _settings(server: OpenAIServer, **llm: object) -> Settings:
    values: dict[str, object] = {
        "base_url": server.base_url,
        "api_key": SecretStr("sk-test-costs-0123456789"),
        "max_retries": 0,
        **llm,
    }
    return Settings(llm=LLMSettings.model_validate(values))


async def test_cached_tokens_arrive_from_a_real_streamed_response(llm_server: OpenAIServer) -> None:
    llm_server.enqueue(Text("hi", prompt_tokens=2000, completion_tokens=7, cached_tokens=1536))
    provider = OpenAICompatibleProvider("gpt-4o", llm_server.base_url, "sk-test", max_retries=0)
    try:
        events = [event async for event in provider.stream([user("hello")])]
    finally:
        await provider.aclose()
    assert llm_server.requests[0].stream
    finished = events[-1]
    assert isinstance(finished, StreamFinished) and finished.completion.usage is not None
    usage = finished.completion.usage
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (2000, 1536, 7)
    ledger = CostLedger()
    ledger.record_agent("gpt-4o", usage)
    # 464 uncached at $2.50, 1536 cached at $1.25, 7 out at $10 (per million)
    expected = (464 * 2.50 + 1536 * 1.25 + 7 * 10.0) / 1_000_000
    assert ledger.report(price_table()).dollars() == pytest.approx(expected)


async def test_a_session_tallies_agent_and_summarization_requests(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("some text\n" * 40)

    def respond(request: RecordedRequest) -> Text | ToolCalls:
        if not request.tools:
            return Text("SUMMARY: a.txt was read.", prompt_tokens=900, completion_tokens=40)
        if request.messages[-1]["role"] == "user":
            return ToolCalls(
                [Call("read_file", {"path": "a.txt"})],
                prompt_tokens=1000,
                completion_tokens=20,
                cached_tokens=500,
            )
        return Text("answer", prompt_tokens=1200, completion_tokens=10, cached_tokens=1000)

    llm_server.responder = respond
    session = build_session(
        _settings(llm_server, model="gpt-4o", summarization_model="gpt-4o-mini"), workspace
    )
    try:
        for text in ("one", "two", "three"):
            await drive(session.agent.run_turn(text))
        await drive(session.agent.compact())
        report = session.agent.costs.report(price_table(session.settings.prices))
    finally:
        await session.aclose()

    summaries = [r for r in llm_server.requests if not r.tools]
    assert summaries
    agent, summarization = report.lines
    assert (agent.kind, agent.model, agent.requests) == ("agent", "gpt-4o", 6)
    assert (agent.prompt, agent.cached, agent.output) == (6600, 4500, 90)
    assert (summarization.kind, summarization.model) == ("summarization", "gpt-4o-mini")
    assert summarization.requests == len(summaries)
    assert summarization.prompt == 900 * len(summaries)
    assert report.dollars("agent") == pytest.approx((2100 * 2.5 + 4500 * 1.25 + 90 * 10) / 1e6)
    assert report.dollars("summarization") == pytest.approx(
        len(summaries) * (900 * 0.15 + 40 * 0.60) / 1e6
    )


async def test_a_resumed_session_goes_on_from_the_cost_it_had(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("first", prompt_tokens=1000, completion_tokens=10, cached_tokens=400),
        Text("second", prompt_tokens=2000, completion_tokens=20),
    )
    settings = _settings(llm_server, model="gpt-4o")
    session = build_session(settings, workspace)
    try:
        await drive(session.agent.run_turn("one"))
        before = session.agent.costs.to_record()
        session_id = session.session_id
    finally:
        await session.aclose()
    assert before["agent"]["gpt-4o"]["prompt"] == 1000

    resumed = build_session(settings, workspace, SessionOptions(session_id=session_id))
    try:
        assert resumed.agent.costs.to_record() == before, "the cost so far came back"
        await drive(resumed.agent.run_turn("two"))
        totals = resumed.agent.costs.agent["gpt-4o"]
    finally:
        await resumed.aclose()
    assert (totals.requests, totals.prompt, totals.cached, totals.output) == (2, 3000, 400, 30)


def test_a_ledger_record_round_trips_and_garbage_counts_as_nothing() -> None:
    ledger = CostLedger()
    ledger.record_agent("gpt-4o", Usage(100, 5, 105, cached_tokens=40))
    ledger.record_summary("gpt-4o-mini", Usage(50, 2, 52))
    ledger.removed_tokens = 70
    assert CostLedger.from_record(ledger.to_record()).to_record() == ledger.to_record()
    broken = CostLedger.from_record(
        {"agent": {"m": {"prompt": "x", "requests": -3}}, "sent_tokens": None}
    )
    assert broken.agent["m"].prompt == 0 and broken.agent["m"].requests == 0
    assert CostLedger.from_record("nonsense").to_record() == CostLedger().to_record()


def test_each_task_call_is_its_own_line_and_old_records_keep_the_agents_name() -> None:
    """Issue 35: `/cost` lists each child by its agent and prompt; the same prompt twice is
    numbered; a session recorded with agent names alone still reads (docs/adr/0048)."""
    from forge.agent.costs import child_label

    first = child_label("reviewer", "review the parser module for bugs please")
    assert first == "reviewer: review the parser module for …"
    assert child_label("reviewer", "review the parser module for bugs please", {first}) == (
        f"{first} (2)"
    )
    ledger = CostLedger.from_record(
        {"subagents": {"writer": {"m": {"requests": 1, "prompt": 10, "output": 1}}}}
    )
    ledger.record_subagent(first, "m", Usage(prompt_tokens=5, completion_tokens=1))
    report = ledger.report(price_table({}))
    assert [(line.label, line.agent) for line in report.lines] == [
        ("subagent writer", "writer"),
        (f"subagent {first}", "reviewer"),
    ]
    assert [entry["agent"] for entry in report.subagents_dict()] == ["writer", "reviewer"]
