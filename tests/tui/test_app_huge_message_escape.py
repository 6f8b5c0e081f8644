"""Esc ends a turn that is summarizing a huge resumed message (issue 20, docs/adr/0036):
counting and chunking leave the event loop, so the app keeps handling keys. Before, chunking
a 2 MB message held the loop for minutes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.message import Message

from forge.agent.history.session_file import SessionStore
from forge.context.conversation import Conversation
from forge.llm.messages import assistant, user
from forge.tui.messages import TurnEnded
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_until

HANG_GUARD_SECONDS = 90.0


async def test_escape_ends_a_turn_summarizing_a_huge_message(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    log = SessionStore().create(workspace, "gpt-4o-mini")
    conversation = Conversation()
    log.attach(conversation)
    conversation.append(user("x" * 2_000_000))  # no boundary at all: character cuts only
    conversation.append(assistant("noted"))

    def slow(request: RecordedRequest) -> Text:
        return Text("SUMMARY: noted.", delay=30.0)

    llm_server.responder = slow
    app = make_app(configure(llm_server, monkeypatch), workspace, resume_latest=True)
    seen: list[Message] = []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        await wait_until(pilot, app.session_ready.is_set, "the session", deadline=120)
        # A hang guard, not a timing assertion: a loop held for minutes (the bug) fails it.
        async with asyncio.timeout(HANG_GUARD_SECONDS):
            await submit(pilot, "go on")
            await wait_until(pilot, lambda: app.busy, "the turn to start")
            await pilot.pause(0.5)  # into the summary
            await pilot.press("escape")
            ended = lambda: any(isinstance(m, TurnEnded) for m in seen)  # noqa: E731
            await wait_until(pilot, ended, "the end")
        assert [m.reason for m in seen if isinstance(m, TurnEnded)] == ["cancelled"]
