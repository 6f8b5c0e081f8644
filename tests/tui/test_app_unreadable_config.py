"""A config.yaml that cannot be parsed (issue 18 item 6), in the real app at 80x24: the welcome
names the file and line to fix and neither claims a missing key nor offers /settings saving;
the problem stays pinned above the chat however much the chat scrolls, and goes once the fixed
file is reloaded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.message import Message

from forge.config.store import ConfigStore
from forge.tui.reload import ConfigReloadController
from forge.tui.widgets.config_banner import ConfigProblemBanner
from forge.tui.widgets.welcome import WELCOME_NO_KEY
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import make_app, notices, submit, wait_until

SIZE = (80, 24)
BROKEN = "llm:\n  api_key: sk-in-the-broken-file-0123\n  model: from-the-file\ncontext: [unclosed\n"
"""The key is in the file, but the file does not parse (line 4 opens a list never closed)."""


@pytest.fixture
def broken_store(monkeypatch: pytest.MonkeyPatch) -> ConfigStore:
    # A remote endpoint without a key in the environment: the case where the "no API key"
    # welcome would show. Nothing is sent to it in these tests.
    monkeypatch.setenv("OPENAI_BASE_URL", "https://models.example.invalid/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    store = ConfigStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text(BROKEN, encoding="utf-8")
    store.load()
    assert store.current.save_blocked is not None
    return store


def banner_visible(app: object) -> bool:
    from forge.tui.app import ForgeApp

    assert isinstance(app, ForgeApp)
    banner = app.query_one(ConfigProblemBanner)
    region = banner.region
    return banner.display and region.height > 0 and app.screen.region.contains_region(region)


async def test_the_welcome_names_the_file_and_line_and_the_problem_stays_pinned(
    broken_store: ConfigStore, workspace: Path
) -> None:
    app = make_app(broken_store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.session_ready.is_set(), "the session to start")
        await pilot.pause()
        told = notices(app)
        where = f"{broken_store.path}, line 4"
        assert not any("No API key is configured yet" in text for text in told)
        assert WELCOME_NO_KEY not in told
        assert not any("Ctrl+S" in text for text in told), "no offer to save from /settings"
        welcome = next(text for text in told if "cannot be read" in text)
        assert where.replace(str(Path.home()), "~") in welcome
        assert "invalid YAML" in welcome
        assert "/settings will not save over the file" in welcome
        # Pinned: visible now, and still after the chat has scrolled far past the welcome.
        assert banner_visible(app)
        banner = app.query_one(ConfigProblemBanner)
        assert "config.yaml, line 4" in banner.problem and "invalid YAML" in banner.problem
        # Messages typed anyway are not sent, and the reason points at the file.
        for number in range(4):
            await submit(pilot, f"hello {number}")
        await pilot.pause()
        assert app.chat.max_scroll_y > 0, "the chat scrolled"
        assert banner_visible(app)
        not_sent = notices(app)[-1]
        assert not_sent.startswith("Not sent: the config file cannot be read")
        assert "config.yaml, line 4" in not_sent and "/settings" not in not_sent


async def test_fixing_the_file_removes_the_pinned_problem(
    broken_store: ConfigStore, workspace: Path, llm_server: OpenAIServer
) -> None:
    app = make_app(broken_store, workspace)
    seen: list[Message] = []
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await wait_until(pilot, lambda: app.session_ready.is_set(), "the session to start")
        await pilot.pause()
        await asyncio.sleep(0.5)  # the watcher registers its watch
        assert banner_visible(app)
        fixed = f"llm:\n  api_key: sk-in-the-fixed-file-0123\n  base_url: {llm_server.base_url}\n"
        broken_store.path.write_text(fixed, encoding="utf-8")
        await wait_until(
            pilot,
            lambda: any(isinstance(m, ConfigReloadController.Applied) for m in seen),
            "the fixed file to be reloaded",
        )
        await pilot.pause()
        assert not app.query_one(ConfigProblemBanner).display
