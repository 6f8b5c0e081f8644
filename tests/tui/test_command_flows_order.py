"""The order of what the chat shows when a slash command starts an app-level flow: /clear,
/sessions ID, /compact, /model NAME, a custom command on its own model, /rewind's
conversation. Written before those flows became messages the app handles (`@on`), so the
move could not reorder a single line; each test reads the whole chat, top to bottom."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import OptionList

from forge.tui.app import ForgeApp
from forge.tui.screens.rewind import RewindModeScreen, RewindScreen
from forge.tui.widgets.chat_blocks import AssistantBlock, NoticeBlock, SummaryBlock
from forge.tui.widgets.chat_blocks import UserMessageBlock as UserBlock
from forge.tui.widgets.welcome import READY_HINT
from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, submit, wait_idle, wait_until

SIZE = (120, 40)


def row(block: Widget) -> str:
    """One chat block as a line: its kind and its first words."""
    if isinstance(block, NoticeBlock):
        return f"notice: {block.text}"
    if isinstance(block, UserBlock):
        return f"user: {block.text}"
    if isinstance(block, AssistantBlock):
        return f"answer: {block.answer_text}"
    if isinstance(block, SummaryBlock):
        return "summary"
    return type(block).__name__


def chat(app: ForgeApp) -> list[str]:
    """The chat's blocks, top to bottom (the start-up welcome left out)."""
    return [
        row(block)
        for block in app.chat.children
        if block.display and not (isinstance(block, NoticeBlock) and block.text == READY_HINT)
    ]


async def settled(pilot: Any, app: ForgeApp, count: int) -> list[str]:
    """The chat once it holds `count` blocks (flows may finish after the input is handled)."""
    await wait_until(pilot, lambda: len(chat(app)) >= count, f"{count} chat blocks")
    await pilot.pause()
    return chat(app)


async def test_clear_empties_the_chat_then_says_a_new_session_started(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        old = app.session.session_id
        await submit(pilot, "/clear")
        assert await settled(pilot, app, 1) == ["notice: New session started."]
        assert app.session.session_id != old


async def test_sessions_id_shows_the_history_then_the_resumed_line(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("first answer"), Text("other answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "the first question")
        await wait_idle(pilot)
        first = app.session.session_id
        await submit(pilot, "/clear")
        await submit(pilot, "another question")
        await wait_idle(pilot)
        await submit(pilot, f"/sessions {first}")
        assert await settled(pilot, app, 3) == [
            "user: the first question",
            "answer: first answer",
            f"notice: Resumed session `{first}`.",
        ]
        assert app.session.session_id == first


async def test_compact_announces_then_closes_its_line_in_place(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/compact keep the plan")
        await wait_idle(pilot, "the compaction")
        lines = await settled(pilot, app, 1)
        assert len(lines) == 1
        assert lines[0].startswith("notice: Nothing to compact yet")
        assert lines[0].endswith("Instructions: keep the plan")


async def test_model_name_says_the_switch_after_applying_it(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("answer from the other model"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/model other-model")
        lines = await settled(pilot, app, 1)
        assert lines == ["notice: Model for this session: `other-model` (was `gpt-4o-mini`)."]
        assert app.settings.llm.model == "other-model"
        assert app.header.model == "other-model"  # type: ignore[attr-defined]
        await submit(pilot, "hi")
        await wait_idle(pilot)
    assert llm_server.requests[-1].model == "other-model"


async def test_a_custom_command_on_its_model_says_so_then_sends_its_text(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    commands = workspace / ".forge" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\nmodel: review-model\n---\nReview $ARGUMENTS\n")
    llm_server.enqueue(Text("reviewed"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "/review app.py")
        await wait_idle(pilot)
        # What was typed, the text it sent folded under it (issue 35, ADR 0048).
        assert await settled(pilot, app, 4) == [
            "notice: `/review` runs this turn on `review-model`.",
            "user: /review app.py",
            "ExpansionBlock",
            "answer: reviewed",
        ]
    assert llm_server.requests[-1].model == "review-model"


async def test_rewinding_the_conversation_shows_the_history_then_the_outcome(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("one"), Text("two"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        for text in ("first question", "second question"):
            await submit(pilot, text)
            await wait_idle(pilot)
        await submit(pilot, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindScreen), "the list")
        await pilot.pause()
        app.screen.query_one("#rewind-turns", OptionList).highlighted = 1
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindModeScreen), "choices")
        await pilot.pause()
        await pilot.press("c")
        await wait_until(pilot, lambda: "Rewound" in chat(app)[-1], "the outcome")
        assert chat(app) == [
            "user: first question",
            "answer: one",
            "notice: Rewound to before “second question”. The conversation is back to that "
            "point; its message is in the prompt.",
        ]
        assert app.prompt.text == "second question"


async def test_sessions_id_replays_the_saved_session_off_the_ui_thread(
    llm_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workspace: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import threading

    llm_server.enqueue(Text("first answer"))
    app = make_app(configure(llm_server, monkeypatch), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "the first question")
        await wait_idle(pilot)
        first, path = app.session.session_id, app.session.log.path
        await submit(pilot, "/clear")
        # A torn last line: reading the file says so in the log, from the thread that read it.
        with path.open("a", encoding="utf-8") as file:
            file.write('{"type": "message", "message": {"role": "assi\n')
        caplog.clear()
        with caplog.at_level("WARNING", logger="forge"):
            await submit(pilot, f"/sessions {first}")
            assert await settled(pilot, app, 3) == [
                "user: the first question",
                "answer: first answer",
                # The repair is said to the user too (issue 34), not only logged.
                f"notice: Resumed session `{first}`. Its file needed repair:\n\n"
                "- skipped torn last line 6",
            ]
        readers = {r.threadName for r in caplog.records if path.name in r.getMessage()}
        assert readers, "the torn line was noticed"
        assert threading.main_thread().name not in readers, "read and replayed in a thread"
