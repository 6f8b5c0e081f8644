"""A pasted message larger than its share of the window (issue 34): the app sends its head and
tail with a recall key, says so in the chat, and the session file keeps the whole message."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.agent.history.session_file import SessionStore
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, wait_idle, wait_until


async def test_a_pasted_message_above_its_share_is_sent_as_head_and_tail(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    big = "HEAD " + "".join(f"line {n:06d}\n" for n in range(20_000)) + " TAIL"
    llm_server.enqueue(Text("got the gist"))
    config = {"context": {"max_tokens": 16000}}
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session")
        handled = app.inputs_handled
        app.prompt.focus()
        app.prompt.text = big  # as a paste puts it there
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.inputs_handled > handled, "the message")
        await wait_idle(pilot)
        shown = notices(app)
        session_id = app.session.session_id
    assert any("more than its share of the context (8,000 tokens)" in n for n in shown), shown
    (request,) = llm_server.requests
    sent = next(m for m in request.messages if m["role"] == "user")["content"]
    assert sent.startswith("HEAD ") and sent.endswith(" TAIL") and len(sent) < 40_000
    assert "recall " in sent
    recorded = SessionStore().path_for(session_id).read_text()
    assert "line 019999" in recorded and "line 010000" in recorded
