"""Settings applied while running (an outside edit of config.yaml, picked up by the reload
controller's watcher) reach the header and the status pane."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets import Static

from tests.support.openai_server import OpenAIServer, Text
from tests.tui.test_app_helpers import configure, make_app, notices, submit, wait_idle, wait_until

SIZE = (120, 40)


async def test_external_config_edit_updates_header_and_status(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch, config={"llm": {"model": "main-model"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        assert app.reload_controller is not None
        assert app.header.summarization_label == "same as model"
        details = app.status.summarization.query_one("#summary-details", Static)
        assert "main-model" in str(details.render())
        edited = {"llm": {"model": "main-model", "summarization_model": "summary-model"}}
        for attempt in range(10):
            # The watcher starts in a worker; an edit made before it watches would be missed,
            # so the edit is repeated until it is seen.
            store.path.write_text(yaml.safe_dump(edited) + f"# edit {attempt}\n", "utf-8")
            try:
                await wait_until(
                    pilot,
                    lambda: app.header.summarization_model == "summary-model",
                    "the reload",
                    deadline=2,
                )
                break
            except AssertionError:
                continue
        assert app.header.summarization_label == "summary-model"
        assert "summary-model" in str(details.render())
        assert app.settings.llm.summarization_model == "summary-model"
        assert app.session.context_manager.summarization_model == "summary-model"


async def test_a_key_added_while_running_ends_the_welcome(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch, api_key="")
    monkeypatch.delenv("OPENAI_BASE_URL")
    store.load()
    llm_server.enqueue(Text("Now I can answer."))
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        assert any("OPENAI_API_KEY" in text for text in notices(app))
        config = {"llm": {"base_url": llm_server.base_url, "api_key": "sk-added-later"}}
        for attempt in range(10):
            store.path.parent.mkdir(parents=True, exist_ok=True)
            store.path.write_text(yaml.safe_dump(config) + f"# edit {attempt}\n", "utf-8")
            try:
                await wait_until(
                    pilot,
                    lambda: app.settings.llm.api_key.get_secret_value() == "sk-added-later",
                    "the key to apply",
                    deadline=2,
                )
                break
            except AssertionError:
                continue
        await wait_until(
            pilot, lambda: notices(app)[-1].startswith("API key set"), "the ready notice"
        )
        await submit(pilot, "hello")
        await wait_idle(pilot)
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-added-later"


async def test_a_broken_edit_while_running_is_told_whole_in_the_chat(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch, config={"llm": {"model": "main-model"}})
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        for attempt in range(10):
            store.path.write_text(f"llm:\n  model: [unclosed\n# edit {attempt}\n", "utf-8")
            try:
                await wait_until(
                    pilot,
                    lambda: any("Config change not applied" in t for t in notices(app)),
                    "the rejection",
                    deadline=2,
                )
                break
            except AssertionError:
                continue
        told = [t for t in notices(app) if "Config change not applied" in t]
        assert told and "config.yaml" in told[0] and "running settings are unchanged" in told[0]
        assert app.settings.llm.model == "main-model"
