"""The app survives a server's untrusted token counts (issue 20, docs/adr/0036): a 400-digit
`prompt_tokens` and cached above prompt are ignored, the cost stays at or above $0; the
request whose usage was ignored is priced from Forge's own count, marked "~" (issue 34)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from forge.tui.widgets.chat_blocks import AssistantBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle, wait_until


async def test_a_400_digit_prompt_count_and_cached_above_prompt_leave_the_app_running(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("first answer", prompt_tokens=10**400, completion_tokens=5),
        Text("second answer", prompt_tokens=1_000, cached_tokens=10**9, completion_tokens=5),
    )
    config = {"llm": {"model": "gpt-4o"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        for text in ("one", "two"):
            await submit(pilot, text)
            await wait_idle(pilot)
        assert app.is_running
        answers = [block.answer_text for block in app.chat.query(AssistantBlock)]
        assert answers == ["first answer", "second answer"]
        cost = str(app.status.query_one("#cost", Static).render())
        # The second request counts as reported (1,000 uncached at $2.50 and 5 out at $10 a
        # million: $0.0026); the first one's usage could not be trusted, so Forge's own count
        # prices it and the sum is marked estimated (issue 34).
        first_line = cost.splitlines()[0]
        assert first_line.startswith("cost   ~$")
        assert float(first_line.removeprefix("cost   ~$")) > 0.0026


async def test_a_server_without_usage_shows_an_estimated_cost_in_the_pane_and_cost(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.usage_mode = "none"
    llm_server.enqueue(Text("no usage here"))
    config = {"llm": {"model": "gpt-4o"}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, app.session_ready.is_set, "the session")
            await submit(pilot, "hi")
            await wait_idle(pilot)
            cost = str(app.status.query_one("#cost", Static).render()).splitlines()
            await submit(pilot, "/cost")
            details = notices(app)[-1]
    finally:
        llm_server.usage_mode = "reported"
    assert cost[0].startswith("cost   ~$") and cost[1].startswith("  agent ~$")
    assert float(cost[0].removeprefix("cost   ~$")) > 0
    assert "**Session cost: ~$" in details
    assert "1 request reported no usage; it is priced from Forge's own token counts" in details
