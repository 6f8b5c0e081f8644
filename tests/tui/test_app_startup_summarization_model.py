"""The TUI applies `llm.summarization_model` from the config file from the very first summary,
and tells once, in the chat and the status pane, when that model cannot answer: the real app
(`run_test`) over a runtime built from the config file, the loopback server's record of each
request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.test_startup_summarization_model import (
    EARLY_SUMMARIES,
    MAIN_MODEL,
    SUMMARY_MODEL,
    agent_script,
    respond_with,
    write_data,
)
from tests.support.openai_server import Fault, OpenAIServer, RecordedRequest, Reply
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle

SIZE = (120, 40)


async def test_the_tui_uses_the_configured_summarization_model_from_the_first_summary(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_data(workspace)
    llm_server.responder = respond_with(agent_script())  # type: ignore[assignment]
    config = {
        "llm": {"model": MAIN_MODEL, "summarization_model": SUMMARY_MODEL},
        "context": EARLY_SUMMARIES,
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read both files")
        await wait_idle(pilot)
    summaries = [request for request in llm_server.requests if not request.tools]
    agent_calls = [request for request in llm_server.requests if request.tools]
    assert summaries, "the config makes the tool-call strategy summarize during the turn"
    assert summaries[0].model == SUMMARY_MODEL
    assert {request.model for request in summaries} == {SUMMARY_MODEL}
    assert {request.model for request in agent_calls} == {MAIN_MODEL}


async def test_a_404_summarization_model_is_told_once_in_the_chat_and_the_status_pane(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    write_data(workspace)
    answer = respond_with(agent_script())

    def respond(request: RecordedRequest) -> Reply:
        if request.model == SUMMARY_MODEL:
            return Fault(404, {"error": {"message": f"The model {SUMMARY_MODEL} does not exist"}})
        return answer(request)  # type: ignore[operator,no-any-return]

    llm_server.responder = respond
    config = {
        "llm": {"model": MAIN_MODEL, "summarization_model": SUMMARY_MODEL},
        "context": EARLY_SUMMARIES,
    }
    app = make_app(configure(llm_server, monkeypatch, config=config), workspace)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read both files")
        await wait_idle(pilot)
        expected = (
            f"Summaries are off: model {SUMMARY_MODEL} answered 404. Older tool outputs will be "
            "shortened instead. Fix: /settings → Summarization Model"
        )
        assert [text for text in notices(app) if text.startswith("Summaries are off")] == [expected]
        assert app.status.summarization.result_text == expected
        assert app.header.summarization_label == f"off ({SUMMARY_MODEL} failed)"
        # Another model re-arms the summarizer; the header and the status pane stop saying
        # that summaries are off.
        await submit(pilot, f"/model {MAIN_MODEL}-2")
        await pilot.pause()
        assert app.header.summarization_label == SUMMARY_MODEL
        assert app.status.summarization.state == "idle"
        assert not app.status.summarization.result_text.startswith("Summaries are off")
    assert len(llm_server.requests_for(SUMMARY_MODEL)) == 1
