"""/cost at 80x24 says only what is true (issue 35): no savings estimate when nothing was
compacted, no "unknown" note when every model is priced, every figure to four decimals
(a 6-cent turn is not "$0.06" beside a "$0.0042" one), and the cache-write price."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.widgets.chat_blocks import NoticeBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle

SIZE = (80, 24)


async def test_cost_without_compaction_or_unpriced_models_is_short_and_precise(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("priced", prompt_tokens=20_000, completion_tokens=1_000))
    config = {"llm": {"model": "gpt-4o", "summarization_model": "gpt-4o-mini"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await submit(pilot, "/cost")
        report = notices(app)[-1]
    # 20k in at $2.50 and 1k out at $10 per million: six cents, to four decimals.
    assert "Session cost: $0.0600" in report and "**$0.0600**" in report
    assert "Estimate" not in report and "Compaction" not in report
    assert "unknown" not in report
    assert "`gpt-4o`: $2.5 in, $1.25 cached, $2.5 cache write, $10 out" in report


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_cost_and_context_show_no_scrollbar_of_their_own(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    size: tuple[int, int],
) -> None:
    llm_server.enqueue(Text("priced", prompt_tokens=20_000, completion_tokens=1_000))
    config = {"llm": {"model": "gpt-4o", "summarization_model": "my-local-model"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=size) as pilot:
        await submit(pilot, "hi")
        await wait_idle(pilot)
        await submit(pilot, "/cost")
        await submit(pilot, "/context")
        await pilot.pause(0.3)
        blocks = list(app.chat.query(NoticeBlock))[-2:]
        scrolling = [
            widget
            for block in blocks
            for widget in [block, *block.query("*")]
            if widget.show_vertical_scrollbar or widget.show_horizontal_scrollbar
        ]
        assert scrolling == []
