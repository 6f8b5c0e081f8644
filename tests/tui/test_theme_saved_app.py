"""A theme chosen in the command palette is saved as `ui.theme` and used on the next start
(issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.command import CommandPalette

from forge.config.store import ConfigStore
from tests.support.openai_server import OpenAIServer
from tests.tui.test_app_helpers import configure, make_app, wait_until

SIZE = (80, 24)


async def test_a_theme_chosen_in_the_palette_is_saved_and_kept(
    llm_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    store = configure(llm_server, monkeypatch)
    app = make_app(store, workspace)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"theme")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        await pilot.press(*"nord")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "nord", "the theme to change")
        await wait_until(pilot, lambda: store.path.exists(), "the config to be saved")
    saved = yaml.safe_load(store.path.read_text())
    assert saved["ui"]["theme"] == "nord"
    assert store.path.stat().st_mode & 0o777 == 0o600

    again = make_app(ConfigStore(), workspace)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert again.theme == "nord"
