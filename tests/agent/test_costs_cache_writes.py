"""Cache writes in money (docs/adr/0037): priced apart from reads and plain input, kept across
a resume, shown by /cost, the status pane and the recache notice."""

from __future__ import annotations

import pytest

from forge.agent.costs import CostLedger
from forge.agent.history.cache_expiry import recache_notice
from forge.config.prices import ModelPriceSettings, price_table
from forge.context.conversation import Conversation
from forge.llm.messages import assistant, system, user
from forge.llm.stream import Usage
from forge.tui.widgets.cost_view import cost_text

CLAUDE = "claude-sonnet-4-5"


def claude_usage(fresh: int, read: int, written: int, output: int) -> Usage:
    prompt = fresh + read + written
    return Usage(prompt, output, prompt + output, cached_tokens=read, cache_write_tokens=written)


def test_reads_writes_and_plain_input_have_their_own_prices() -> None:
    ledger = CostLedger()
    ledger.record_agent(CLAUDE, claude_usage(1_000, 0, 100_000, 500))
    ledger.record_agent(CLAUDE + "-20250929", claude_usage(2_000, 100_000, 3_000, 400))
    report = ledger.report(price_table())
    first, second = report.lines
    assert first.dollars == pytest.approx((1_000 * 3 + 100_000 * 3.75 + 500 * 15) / 1e6)
    assert second.dollars == pytest.approx(
        (2_000 * 3 + 100_000 * 0.30 + 3_000 * 3.75 + 400 * 15) / 1e6
    )
    assert report.cache_tokens() == (100_000, 103_000)
    # A ledger written to the session and read back keeps its cache writes.
    again = CostLedger.from_record(ledger.to_record()).report(price_table())
    assert again.dollars() == pytest.approx(report.dollars())
    assert again.to_dict()["models"][0]["cache_write_tokens"] == 100_000


def test_prices_can_list_a_cache_write_price_and_default_it_to_input() -> None:
    table = price_table(
        {
            "my-claude": ModelPriceSettings(input=2, cached_input=0.2, output=8, cache_write=4),
            "plain": ModelPriceSettings(input=1, output=2),
        }
    )
    mine, plain = table.lookup("my-claude"), table.lookup("plain")
    assert mine is not None and mine.cache_write_price == 4
    assert plain is not None and plain.cache_write_price == 1
    assert mine.cost(0, 0, 0, 1_000_000) == pytest.approx(4)


def test_cost_details_and_the_status_pane_show_cache_reads_and_writes() -> None:
    ledger = CostLedger()
    ledger.record_agent(CLAUDE, claude_usage(1_000, 84_000, 2_500, 300))
    report = ledger.report(price_table())
    details = report.details_markdown()
    assert "| kind | model | requests | in | cache read | cache write | out | cost |" in details
    assert f"| agent | `{CLAUDE}` | 1 | 87,500 | 84,000 | 2,500 | 300 |" in details
    assert cost_text(report).splitlines()[-1] == "cache  r 84.0k w 2.5k"
    # Without cache writes (an OpenAI-compatible server) the pane stays as it was.
    openai = CostLedger()
    openai.record_agent("gpt-4o", Usage(1_000, 10, 1_010, cached_tokens=500))
    assert "cache" not in cost_text(openai.report(price_table()))


def test_the_recache_notice_prices_the_prompt_at_the_cache_write_price() -> None:
    conversation = Conversation([system("sys"), user("hi"), assistant("hello")])
    answered = conversation.messages[-1].created_at
    prices = price_table()
    warm = recache_notice(
        conversation, 84_000, model=CLAUDE, ttl="5m", prices=prices, now=answered + 60
    )
    assert warm is None
    notice = recache_notice(
        conversation, 84_000, model=CLAUDE, ttl="5m", prices=prices, now=answered + 3 * 3600
    )
    assert notice == (
        "Resuming re-caches 84.0k prompt tokens ≈ $0.32 "
        "(the prompt cache expired: last request 3 h ago)."
    )
    # The 1-hour cache is still warm after 30 minutes.
    assert (
        recache_notice(
            conversation, 84_000, model=CLAUDE, ttl="1h", prices=prices, now=answered + 1800
        )
        is None
    )
    unknown = recache_notice(
        conversation, 1_000, model="claude-next", ttl="5m", prices=prices, now=answered + 900
    )
    assert unknown is not None and "unknown amount" in unknown
    assert (
        recache_notice(
            Conversation([system("s"), user("q")]), 10, model=CLAUDE, ttl="5m", prices=prices
        )
        is None
    )
