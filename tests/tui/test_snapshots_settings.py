"""Snapshots of the settings overlay at a fixed terminal size, with fixed values.

Update after an intended visual change with `pytest tests/tui/test_snapshots_settings.py
--snapshot-update`, and look at the SVGs before committing them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Input

from forge.config.paths import config_path
from forge.config.store import ConfigStore, LoadResult
from forge.tui.settings import SettingsScreen

SIZE = (100, 40)
SnapCompare = Callable[..., bool]


class SettingsHost(App[None]):
    """Opens the settings overlay at start."""

    def __init__(self, store: ConfigStore) -> None:
        super().__init__()
        self.store = store
        self.results: list[LoadResult | None] = []

    def on_mount(self) -> None:
        self.push_screen(SettingsScreen(self.store), self.results.append)


@pytest.fixture
def config_file() -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "llm:\n"
        "  model: qwen3-coder-30b\n"
        "  summarization_model: qwen3-4b-instruct\n"
        "  base_url: http://127.0.0.1:8080/v1\n"
        "  api_key: sk-snapshot-not-a-real-key-0000\n"
        "context:\n"
        "  max_tokens: 128000\n"
        "tools:\n"
        "  command_allowlist: [git status, git diff, pytest -q]\n",
        encoding="utf-8",
    )
    os.chmod(path, 0o600)
    return path


async def _steady_cursor(pilot: Pilot[None]) -> None:
    """Wait until every section is mounted (the later ones come after the first frame), then
    stop the cursor blinking so the screenshot does not depend on timing."""
    screen = pilot.app.screen
    while not getattr(screen, "built", True):
        await pilot.pause(0.02)
    for field_input in pilot.app.screen.query(Input):
        field_input.cursor_blink = False
    await pilot.pause()


def test_settings_overlay(snap_compare: SnapCompare, config_file: Path) -> None:
    """The overlay as it opens: masked key, placeholders, the focused field's help line."""
    app = SettingsHost(ConfigStore(config_file))
    assert snap_compare(app, terminal_size=SIZE, run_before=_steady_cursor)


def test_settings_overlay_invalid_and_from_environment(
    snap_compare: SnapCompare, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An invalid threshold with its reason, and a model that came from the environment."""
    monkeypatch.setenv("FORGE_LLM__MODEL", "env-model")
    app = SettingsHost(ConfigStore(config_file))

    async def make_invalid(pilot: Pilot[None]) -> None:
        await pilot.pause()
        field_input = pilot.app.screen.query_one("#field-context-warning_threshold", Input)
        field_input.focus()
        await pilot.pause()
        field_input.value = "1.5"
        await _steady_cursor(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=make_invalid)
