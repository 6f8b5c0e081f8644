# Tests write the config file with plain Python between UI steps, as an editor would.
# ruff: noqa: ASYNC240
"""The hot-reload controller with a real store, a real runtime and the loopback LLM server.

The host app only starts the controller; everything it drives is real: the file watcher on
a temp config file, `Session.apply_settings`, agent turns against 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import yaml
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerState

from forge.agent.events import TurnFinished
from forge.config.paths import config_path
from forge.config.store import ConfigStore
from forge.session.build import build_session
from forge.session.core import Session
from forge.session.settings_changes import describe_changes
from forge.tui.reload import ConfigReloadController
from tests.support.openai_server import OpenAIServer

SIZE = (100, 40)
WAIT_LIMIT_SECONDS = 20.0
"""How long a test waits for the watcher before failing (never asserted as a duration)."""


class ReloadHost(App[None]):
    """Starts the reload controller when it mounts, as the Forge app does."""

    def __init__(self, store: ConfigStore, session: Session) -> None:
        super().__init__()
        self.controller = ConfigReloadController(app=self, store=store, session=session)

    def on_mount(self) -> None:
        self.controller.start()


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    """Let the app run until `condition()` holds; fail after WAIT_LIMIT_SECONDS."""
    deadline = time.monotonic() + WAIT_LIMIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


async def watcher_ready(pilot: Pilot[None]) -> None:
    """Give the watcher worker time to register its inotify watch before files change."""
    await pilot.pause()
    await asyncio.sleep(0.5)


def of_type(seen: list[Message], kind: type[Message]) -> list[Message]:
    return [message for message in seen if isinstance(message, kind)]


def notices(seen: list[Message], severity: str | None = None) -> list[str]:
    return [
        f"{message.notification.title}: {message.notification.message}"
        for message in seen
        if isinstance(message, Notify)
        and (severity is None or message.notification.severity == severity)
    ]


def write_config(path: Path, data: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    os.chmod(path, 0o600)


@pytest.fixture
def config_file(llm_server: OpenAIServer) -> Path:
    path = config_path()
    write_config(
        path,
        {"llm": {"model": "main-model", "base_url": llm_server.base_url, "api_key": "sk-test"}},
    )
    return path


@pytest.fixture
async def session(config_file: Path, workspace: Path) -> AsyncIterator[Session]:
    built = build_session(ConfigStore(config_file).current.settings, workspace)
    yield built
    await built.aclose()


async def run_turn(session: Session, text: str) -> None:
    async for event in session.run_turn(text):
        if isinstance(event, TurnFinished):
            assert event.reason != "error", event


async def test_an_outside_edit_is_applied_to_the_running_agent(
    config_file: Path, session: Session, llm_server: OpenAIServer
) -> None:
    seen: list[Message] = []
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        data = yaml.safe_load(config_file.read_text())
        data["llm"]["model"] = "edited-model"
        data["llm"]["summarization_model"] = "edited-summary"
        write_config(config_file, data)

        await wait_for(pilot, lambda: bool(of_type(seen, ConfigReloadController.Applied)))
        [applied] = of_type(seen, ConfigReloadController.Applied)
        assert isinstance(applied, ConfigReloadController.Applied)
        assert applied.source == "file"
        assert "llm.model: main-model → edited-model" in applied.description
        assert session.provider.model == "edited-model"
        assert session.context_manager.summarization_model == "edited-summary"
        assert any(notice.startswith("Config reloaded") for notice in notices(seen))

        await run_turn(session, "hello")
        assert llm_server.requests[-1].model == "edited-model"


async def test_an_invalid_outside_edit_is_reported_and_the_running_config_stays(
    config_file: Path, session: Session, llm_server: OpenAIServer
) -> None:
    seen: list[Message] = []
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        config_file.write_text(
            f"llm:\n  model: never-applied\n  base_url: {llm_server.base_url}\n"
            "context:\n  warning_threshold: 7\n",
            encoding="utf-8",
        )
        await wait_for(pilot, lambda: bool(of_type(seen, ConfigReloadController.Rejected)))
        [rejected] = of_type(seen, ConfigReloadController.Rejected)
        assert isinstance(rejected, ConfigReloadController.Rejected)
        assert "config.yaml:5: context.warning_threshold" in str(rejected.error)
        assert any("config.yaml:5" in notice for notice in notices(seen, "error"))
        assert not of_type(seen, ConfigReloadController.Applied)
        assert session.settings.llm.model == "main-model"
        assert session.provider.model == "main-model"

        await run_turn(session, "hello")
        assert llm_server.requests[-1].model == "main-model"


async def test_malformed_yaml_is_reported_with_its_line(
    config_file: Path, session: Session
) -> None:
    seen: list[Message] = []
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        config_file.write_text("llm:\n  model: [unclosed\n", encoding="utf-8")
        await wait_for(pilot, lambda: bool(of_type(seen, ConfigReloadController.Rejected)))
        [rejected] = of_type(seen, ConfigReloadController.Rejected)
        assert isinstance(rejected, ConfigReloadController.Rejected)
        assert "invalid YAML" in str(rejected.error)
        assert session.settings.llm.model == "main-model"


async def test_a_save_made_by_forge_is_applied_once(config_file: Path, session: Session) -> None:
    seen: list[Message] = []
    store = ConfigStore(config_file)
    app = ReloadHost(store, session)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        current = store.current.settings
        saved_settings = current.model_copy(
            update={"llm": current.llm.model_copy(update={"model": "saved-model"})}
        )
        result = store.save(saved_settings, {"llm.model"})
        await app.controller.apply_saved(result)
        # Let the watcher see (and skip) Forge's own write before the outside edit lands.
        await asyncio.sleep(1.0)
        data = yaml.safe_load(config_file.read_text())
        data["llm"]["model"] = "outside-model"
        write_config(config_file, data)
        await wait_for(
            pilot,
            lambda: any(
                isinstance(message, ConfigReloadController.Applied) and message.source == "file"
                for message in seen
            ),
        )
        await pilot.pause()
        applied = of_type(seen, ConfigReloadController.Applied)
        sources = [(m.source, m.settings.llm.model) for m in applied]  # type: ignore[attr-defined]
        assert sources == [("settings", "saved-model"), ("file", "outside-model")]
        assert session.provider.model == "outside-model"


async def test_a_cancelled_overlay_changes_nothing(config_file: Path, session: Session) -> None:
    seen: list[Message] = []
    app = ReloadHost(ConfigStore(config_file), session)
    provider_before = session.provider
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await app.controller.apply_saved(None)
        await pilot.pause()
    assert not of_type(seen, ConfigReloadController.Applied)
    assert session.provider is provider_before


async def test_stop_ends_the_watch_worker(config_file: Path, session: Session) -> None:
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE) as pilot:
        await watcher_ready(pilot)
        worker = app.controller._worker
        assert worker is not None and worker.state is WorkerState.RUNNING
        app.controller.stop()
        await wait_for(pilot, lambda: worker.is_finished)
        assert worker.state is WorkerState.SUCCESS


async def test_app_exit_cancels_the_watcher_promptly(config_file: Path, session: Session) -> None:
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE) as pilot:
        await watcher_ready(pilot)
        worker = app.controller._worker
        assert worker is not None
    # Cancellation is turned into the stop event the watcher thread polls, so the worker
    # ends within one watcher step instead of waiting out the thread's timeout.
    with contextlib.suppress(WorkerCancelled):
        await asyncio.wait_for(worker.wait(), WAIT_LIMIT_SECONDS)
    assert worker.state is WorkerState.CANCELLED
    assert app.controller._stop_event.is_set()


def test_describe_changes_never_shows_the_key(config_file: Path) -> None:
    before = ConfigStore(config_file).current.settings
    llm = before.llm.model_copy(
        update={"model": "other", "api_key": type(before.llm.api_key)("sk-new-secret-value")}
    )
    after = before.model_copy(update={"llm": llm})
    lines = describe_changes(before, after)
    assert "llm.model: main-model → other" in lines
    assert "llm.api_key changed" in lines
    assert not any("sk-new-secret-value" in line or "sk-test" in line for line in lines)


async def test_a_session_only_override_switches_the_agent_and_leaves_the_file(
    config_file: Path, session: Session, llm_server: OpenAIServer
) -> None:
    """`/model NAME`'s road: the controller's one path, no file write, no toast."""
    before = config_file.read_bytes()
    seen: list[Message] = []
    app = ReloadHost(ConfigStore(config_file), session)
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await watcher_ready(pilot)
        llm = session.settings.llm.model_copy(update={"model": "override-model"})
        description = await app.controller.apply_override(
            session.settings.model_copy(update={"llm": llm})
        )
        assert "override-model" in description
        await run_turn(session, "hello")
        await pilot.pause(0.3)
    assert llm_server.requests[-1].model == "override-model"
    assert config_file.read_bytes() == before
    assert notices(seen) == []
    assert of_type(seen, ConfigReloadController.Applied) == []
