"""`/context` says where the context window came from (issue 12): reported by the server,
or only a guess from the model's name (said once)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.tui.app import ForgeApp
from tests.support.openai_server import Info, OpenAIServer, Text
from tests.tui.test_app_helpers import (
    configure,
    make_app,
    notices,
    submit,
    wait_idle,
    wait_until,
)

SIZE = (100, 40)


def asking(app: ForgeApp) -> bool:
    """Whether the app's runtime still awaits the server's window."""
    return app.session.window is not None and app.session.window.asking


async def test_context_shows_the_window_the_server_reported(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.info["/props"] = Info({"default_generation_settings": {"n_ctx": 6144}})
    llm_server.enqueue(Text("hi"))
    app = make_app(configure(llm_server, monkeypatch, config={"llm": {"model": "tiny"}}), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: not asking(app), "the server's window")
        await submit(pilot, "/context")
        await pilot.pause()
        report = notices(app)[-1]
        assert "6,144 tokens, reported by the server (/props n_ctx)" in report
        assert "guess" not in report
        assert app.session.context_manager.max_tokens == 6144 - 768


async def test_context_says_once_that_the_window_is_only_a_guess(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    llm_server.enqueue(Text("hi"))
    app = make_app(configure(llm_server, monkeypatch, config={"llm": {"model": "tiny"}}), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "hello")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: not asking(app), "the server's answer")
        await submit(pilot, "/context")
        await pilot.pause()
        first = notices(app)[-1]
        await submit(pilot, "/context")
        await pilot.pause()
        second = notices(app)[-1]
    assert "32,768 tokens, guessed from the model name" in first
    assert "is a guess from its name" in first and "context.max_tokens" in first
    assert "32,768 tokens, guessed from the model name" in second
    assert "is a guess from its name" not in second
