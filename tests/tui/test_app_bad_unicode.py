"""The app facing a lone surrogate from the server (issue 34): shown as U+FFFD, the session
file written, and the next prompt of the session still answered."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.history.session_file import SessionStore
from forge.tui.widgets.chat_blocks import AssistantBlock
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until


async def test_a_lone_surrogate_is_replaced_and_the_session_goes_on(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("a\ud800b", chunk_size=1), Text("second answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        for text in ("one", "two"):
            await submit(pilot, text)
            await wait_idle(pilot)
        assert app.is_running
        answers = [block.answer_text for block in app.chat.query(AssistantBlock)]
        session_id = app.session.session_id
    assert answers == ["a\ufffdb", "second answer"]
    sent = [m["content"] for m in llm_server.requests[-1].messages if m["role"] != "system"]
    assert sent == ["one", "a\ufffdb", "two"]
    recorded = SessionStore().path_for(session_id).read_text(encoding="utf-8")
    assert "a\ufffdb" in recorded and "second answer" in recorded
