"""The app survives a server's untrusted token counts (issue 20, docs/adr/0036): a 400-digit
`prompt_tokens` and cached above prompt are ignored, the cost stays at or above $0."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from forge.tui.widgets.chat_blocks import AssistantBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until


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
        await wait_until(pilot, app.runtime_ready.is_set, "the runtime")
        for text in ("one", "two"):
            await submit(pilot, text)
            await wait_idle(pilot)
        assert app.is_running
        answers = [block.answer_text for block in app.chat.query(AssistantBlock)]
        assert answers == ["first answer", "second answer"]
        cost = str(app.status.query_one("#cost", Static).render())
        # Only the second request counts: 1,000 uncached at $2.50 and 5 out at $10 a million.
        assert cost.splitlines()[0] == "cost   $0.0026"
