"""The session budgets with the window the server states (docs/adr/0019): asked before the
first call, asked again when the model changes, overridden by `context.max_tokens`, and
learned from an overflow error before the compaction that follows it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from forge.agent.events import ContextUsage, SummarizationStarted
from forge.config.settings import ContextSettings, LLMSettings, Settings
from forge.llm.model_info import default_reply_headroom
from forge.llm.window_discovery import WindowSource
from forge.session.build import build_session
from tests.agent.loop_harness import drive, finished, of_type
from tests.support.openai_server import ContextOverflow, Info, OpenAIServer, Text


def settings_for(server: OpenAIServer, model: str = "tiny", **context: object) -> Settings:
    llm = LLMSettings.model_validate(
        {"base_url": server.base_url, "model": model, "max_retries": 0}
    )
    return Settings(llm=llm, context=ContextSettings.model_validate(context))


def budget(window: int) -> int:
    return window - default_reply_headroom(window)


async def test_the_first_call_waits_for_the_servers_window(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.info["/v1/models"] = Info(
        {"data": [{"id": "tiny", "max_model_len": 8192}, {"id": "big", "max_model_len": 65536}]}
    )
    llm_server.enqueue(Text("hello"), Text("again"))
    session = build_session(settings_for(llm_server), workspace)  # no loop yet: not asked
    try:
        assert session.window is not None and session.window.current.source is WindowSource.GUESSED
        session.window.first_request_wait = 60  # a loaded machine must not turn this into a race
        events = await drive(session.agent.run_turn("hi"))
        assert finished(events).reason == "answered"
        # The budget of the first request was already the server's.
        assert {usage.max_tokens for usage in of_type(events, ContextUsage)} == {budget(8192)}
        assert session.window.current.tokens == 8192

        session.apply_settings(settings_for(llm_server, model="big"))
        session.window.first_request_wait = 60
        events = await drive(session.agent.run_turn("and now?"))
        assert {usage.max_tokens for usage in of_type(events, ContextUsage)} == {budget(65536)}
        assert session.context_manager.max_tokens == budget(65536)

        session.apply_settings(settings_for(llm_server, model="big", max_tokens=5000))
        assert session.window.current.source is WindowSource.CONFIGURED
        assert session.context_manager.max_tokens == 5000
    finally:
        await session.aclose()


async def test_an_overflow_error_sets_the_budget_before_the_compaction(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    llm_server.enqueue(
        Text("A long first answer. " + "word " * 2500),
        ContextOverflow(limit=3000, sent=3500),
        Text("The first answer was long."),  # the compaction's summary
        Text("fits now"),
    )
    session = build_session(settings_for(llm_server), workspace)
    try:
        await drive(session.agent.run_turn("hi"))
        events = await drive(session.agent.run_turn("and now?"))
        assert finished(events).reason == "answered"
        (compaction, *_) = of_type(events, SummarizationStarted)
        assert compaction.max_tokens == budget(3000)
        assert session.window is not None
        assert session.window.current.source is WindowSource.OVERFLOW
        assert session.context_manager.max_tokens == budget(3000)
    finally:
        await session.aclose()


async def test_a_late_answer_about_the_previous_model_changes_nothing(
    llm_server: OpenAIServer, workspace: Path
) -> None:
    listing = {
        "data": [{"id": "tiny", "max_model_len": 8192}, {"id": "big", "max_model_len": 65536}]
    }
    llm_server.info["/v1/models"] = Info(listing, delay=1.0)
    session = build_session(settings_for(llm_server), workspace)  # asks at once: a loop runs
    old = session.window
    assert old is not None
    try:
        for _ in range(3000):  # until the slow question about "tiny" reached the server
            if any(request.path == "/v1/models" for request in llm_server.info_requests):
                break
            await asyncio.sleep(0.01)
        llm_server.info["/v1/models"] = Info(listing)  # the question about "big" is answered fast
        session.apply_settings(settings_for(llm_server, model="big"))
        assert session.window is not None and session.window is not old
        assert (await session.window.settle(wait=60)).tokens == 65536
        assert (await old.settle(wait=60)).tokens == 8192  # the old answer arrived after
        assert session.context_manager.max_tokens == budget(65536)
    finally:
        await session.aclose()
