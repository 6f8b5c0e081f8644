# Tests read and write the config file with plain Python between UI steps, as an editor would.
# ruff: noqa: ASYNC240
"""End to end: the real Forge app, a real config file, the loopback LLM server.

/settings is opened by typing it, fields are edited with keys, Ctrl+S saves; the requests the
server receives afterwards show which model the agent and the summarizer use.
"""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input

from forge.config.paths import config_path
from forge.config.store import ConfigStore
from forge.llm.anthropic_provider import AnthropicProvider
from forge.session.build import build_session
from forge.session.core import Session
from forge.tui.app import ForgeApp
from forge.tui.messages import TurnEnded
from forge.tui.reload import ConfigReloadController
from forge.tui.settings import SettingsScreen
from tests.support.anthropic_server import Answer, AnthropicServer
from tests.support.openai_server import OpenAIServer, RecordedRequest, Text
from tests.tui.test_reload_controller import wait_for, watcher_ready
from tests.tui.test_settings_screen import notices, rendered_text, replace_text

SIZE = (100, 40)
SECRET_KEY = "sk-e2e-0123456789abcdefDONOTSHOW"


@pytest.fixture
def config_file(llm_server: OpenAIServer) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"llm:\n  model: main-model\n  base_url: {llm_server.base_url}\n  api_key: {SECRET_KEY}\n",
        encoding="utf-8",
    )
    os.chmod(path, 0o600)
    return path


@pytest.fixture
async def forge(config_file: Path, workspace: Path) -> AsyncIterator[tuple[ForgeApp, Session]]:
    store = ConfigStore(config_file)
    session = build_session(store.current.settings, workspace)
    yield ForgeApp(session=session, store=store, workspace=workspace), session
    await session.aclose()


def turns_ended(seen: list[Message]) -> int:
    return sum(isinstance(message, TurnEnded) for message in seen)


async def submit(pilot: Pilot[int], seen: list[Message], text: str) -> None:
    """Type `text` into the prompt, press Enter, and wait for the turn (or /compact) to end."""
    before = turns_ended(seen)
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: turns_ended(seen) > before)  # type: ignore[arg-type]


async def open_settings(pilot: Pilot[int]) -> SettingsScreen:
    await pilot.press(*"/settings", "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SettingsScreen))  # type: ignore[arg-type]
    screen = pilot.app.screen
    assert isinstance(screen, SettingsScreen)
    return screen


async def save_settings(pilot: Pilot[int], seen: list[Message]) -> None:
    """Ctrl+S, then wait until the controller has applied the save."""
    before = len([m for m in seen if isinstance(m, ConfigReloadController.Applied)])
    await pilot.press("ctrl+s")
    await wait_for(  # type: ignore[arg-type]
        pilot,
        lambda: len([m for m in seen if isinstance(m, ConfigReloadController.Applied)]) > before,
    )
    assert not isinstance(pilot.app.screen, SettingsScreen)


def summarization_requests(server: OpenAIServer) -> list[RecordedRequest]:
    """Requests that carried no tools and did not stream: the summarizer's."""
    return [request for request in server.requests if not request.tools and not request.stream]


async def some_history(pilot: Pilot[int], seen: list[Message], server: OpenAIServer) -> None:
    """Three turns with long answers, so /compact has old messages to summarize."""
    for number in range(3):
        server.enqueue(Text("word " * 700, chunk_size=400))
        await submit(pilot, seen, f"task {number}")


async def test_settings_save_reaches_the_agent_and_the_summarizer(
    forge: tuple[ForgeApp, Session], config_file: Path, llm_server: OpenAIServer
) -> None:
    app, session = forge
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        await some_history(pilot, seen, llm_server)
        assert {request.model for request in llm_server.requests} == {"main-model"}

        await open_settings(pilot)
        await replace_text(pilot, "field-llm-model", "new-main")
        await replace_text(pilot, "field-llm-summarization_model", "new-summary")
        await save_settings(pilot, seen)

        on_disk = yaml.safe_load(config_file.read_text())
        assert on_disk["llm"]["model"] == "new-main"
        assert on_disk["llm"]["summarization_model"] == "new-summary"
        assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
        assert any(notice.startswith("Settings saved") for notice in notices(seen))

        llm_server.reset()
        await submit(pilot, seen, "after the change")
        assert [request.model for request in llm_server.requests] == ["new-main"]

        llm_server.reset()
        await submit(pilot, seen, "/compact")
        summaries = summarization_requests(llm_server)
        assert summaries and {request.model for request in summaries} == {"new-summary"}

        # Clearing the summarization model sends summaries to the main model again.
        await open_settings(pilot)
        await replace_text(pilot, "field-llm-summarization_model", "")
        await save_settings(pilot, seen)
        assert "summarization_model" not in yaml.safe_load(config_file.read_text())["llm"]

        await some_history(pilot, seen, llm_server)
        llm_server.reset()
        await submit(pilot, seen, "/compact")
        summaries = summarization_requests(llm_server)
        assert summaries and {request.model for request in summaries} == {"new-main"}
    assert session.context_manager.summarization_model == ""


async def test_an_invalid_value_blocks_the_save_with_its_reason(
    forge: tuple[ForgeApp, Session], config_file: Path
) -> None:
    app, session = forge
    before = config_file.read_bytes()
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        screen = await open_settings(pilot)
        await replace_text(pilot, "field-context-auto_summary_threshold", "0")
        assert screen.query_one("#field-context-auto_summary_threshold", Input).has_class(
            "-invalid"
        )
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen
        assert any(
            "Auto-summary threshold: must be in (0, 1]" in notice
            for notice in notices(seen, "error")
        )
    assert config_file.read_bytes() == before
    assert session.settings.context.auto_summary_threshold == 0.9


async def test_a_failed_save_leaves_the_old_file_and_the_running_config(
    forge: tuple[ForgeApp, Session], config_file: Path
) -> None:
    app, session = forge
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        screen = await open_settings(pilot)
        # Another program replaces the file by a directory while the overlay is open.
        config_file.rename(config_file.with_name("config.yaml.moved"))
        config_file.mkdir()
        await replace_text(pilot, "field-llm-model", "never-saved")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen
        # Either the store refuses the write or the overlay sees the reload the watcher made
        # of the change; both say why, in an error toast.
        assert any(notice.startswith("Settings not saved") for notice in notices(seen, "error"))
        assert session.provider.model == "main-model"
    assert config_file.is_dir() and not any(config_file.iterdir())
    assert "main-model" in config_file.with_name("config.yaml.moved").read_text()


async def test_an_outside_edit_is_reloaded_by_the_running_app(
    forge: tuple[ForgeApp, Session], config_file: Path, llm_server: OpenAIServer
) -> None:
    app, session = forge
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        data = yaml.safe_load(config_file.read_text())
        data["llm"]["model"] = "edited-elsewhere"
        config_file.write_text(yaml.safe_dump(data), encoding="utf-8")
        await wait_for(  # type: ignore[arg-type]
            pilot, lambda: any(isinstance(m, ConfigReloadController.Applied) for m in seen)
        )
        assert session.provider.model == "edited-elsewhere"
        llm_server.reset()
        await submit(pilot, seen, "hello")
        assert [request.model for request in llm_server.requests] == ["edited-elsewhere"]


async def test_an_invalid_outside_edit_is_reported_and_ignored(
    forge: tuple[ForgeApp, Session], config_file: Path
) -> None:
    app, session = forge
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        config_file.write_text("llm:\n  model: ''\n", encoding="utf-8")
        await wait_for(  # type: ignore[arg-type]
            pilot, lambda: any(isinstance(m, ConfigReloadController.Rejected) for m in seen)
        )
        assert any("config.yaml:2: llm.model" in notice for notice in notices(seen, "error"))
        assert not any(isinstance(m, ConfigReloadController.Applied) for m in seen)
        assert session.provider.model == "main-model"


async def test_the_api_key_is_masked_in_the_overlay(forge: tuple[ForgeApp, Session]) -> None:
    app, _ = forge
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await open_settings(pilot)
        text = rendered_text(app)
        assert "API Key" in text
        assert SECRET_KEY not in text
        assert SECRET_KEY not in app.export_screenshot()


async def test_the_provider_field_switches_the_running_agent_to_the_anthropic_api(
    forge: tuple[ForgeApp, Session],
    config_file: Path,
    llm_server: OpenAIServer,
    anthropic_server: AnthropicServer,
) -> None:
    """/settings → Provider "anthropic", Base URL of a Messages API server, a Claude model,
    Ctrl+S: the next turn goes to that server in its shape (hot reload, docs/adr/0037)."""
    app, session = forge
    seen: list[Message] = []
    anthropic_server.enqueue(Answer("hello from claude"))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        screen = await open_settings(pilot)
        assert screen.query_one("#field-llm-provider", Input).value == "openai"
        await replace_text(pilot, "field-llm-provider", "anthropic")
        await replace_text(pilot, "field-llm-base_url", anthropic_server.base_url)
        await replace_text(pilot, "field-llm-model", "claude-haiku-4-5")
        await save_settings(pilot, seen)
        assert yaml.safe_load(config_file.read_text())["llm"]["provider"] == "anthropic"
        assert isinstance(session.provider, AnthropicProvider)

        await submit(pilot, seen, "hi claude")
    assert llm_server.requests == []
    (request,) = anthropic_server.requests
    assert request.model == "claude-haiku-4-5"
    assert request.headers["authorization"] == f"Bearer {SECRET_KEY}"
    assert request.messages[-1]["content"][-1]["text"] == "hi claude"
