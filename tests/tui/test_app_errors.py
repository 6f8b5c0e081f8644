"""Errors give a way forward: retries are visible while they wait, a 401 points at the key in
/settings, and a failed message sent again with Up is not a second copy in the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message

from forge.llm.stream import RetryScheduled
from forge.tui.retry_notices import RetryScheduledShown
from forge.tui.widgets.chat_blocks import AssistantBlock
from tests.support.openai_server import Fault, OpenAIServer, RateLimited, ServerFault, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle

SIZE = (120, 40)


async def test_a_retried_server_error_is_shown_while_forge_waits(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(ServerFault(500), Text("fine now"))
    app = make_app(
        configure(llm_server, monkeypatch, config={"llm": {"max_retries": 2}}), workspace
    )
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        # The provider's own event reached the app (no log record in between).
        retries = [m.retry for m in seen if isinstance(m, RetryScheduledShown)]
        assert [(r.status_code, r.error_kind, r.attempt, r.max_attempts) for r in retries] == [
            (500, "server_error", 1, 2)
        ]
        assert isinstance(retries[0], RetryScheduled)
        told = [text for text in notices(app) if "retrying in" in text]
        assert len(told) == 1 and "(HTTP 500, retry 1 of 2)" in told[0]
        assert [b.answer_text for b in app.chat.query(AssistantBlock)] == ["fine now"]
    assert len(llm_server.requests) == 2


async def test_a_second_retry_updates_the_one_notice_of_the_turn(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(RateLimited("0"), RateLimited("0"), Text("fine now"))
    app = make_app(
        configure(llm_server, monkeypatch, config={"llm": {"max_retries": 2}}), workspace
    )
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        told = [text for text in notices(app) if "retrying in" in text]
        assert len(told) == 1, "one line per turn, updated in place"
        assert "(HTTP 429, retry 2 of 2)" in told[0] and "gpt-4o-mini" in told[0]
        assert [b.answer_text for b in app.chat.query(AssistantBlock)] == ["fine now"]
    assert len(llm_server.requests) == 3


async def test_a_401_points_at_the_key_and_resending_does_not_duplicate_the_message(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(
        Fault(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}),
        Text("hello back"),
    )
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        error = [text for text in notices(app) if "API key" in text]
        assert error and "Check the API key in /settings" in error[-1]
        # Up brings the message back; Enter sends it again.
        app.prompt.focus()
        await pilot.press("up")
        assert app.prompt.text == "hello"
        handled = app.inputs_handled
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.inputs_handled == handled + 1
        users = [m.content for m in app.session.agent.conversation.messages if m.role == "user"]
        assert users == ["hello"], "one copy of the message, answered once"
    sent = [m for m in llm_server.requests[1].messages if m["role"] == "user"]
    assert [m["content"] for m in sent] == ["hello"]
