# Tests read and write tiny files between UI steps on purpose; blocking there is the point.
# ruff: noqa: ASYNC240
"""The settings overlay on its own, hosted by a minimal app over a real config file.

Each test drives the real `SettingsScreen` with keys through Pilot and checks what matters:
the file on disk (content, mode), the screen's result, the messages the app saw.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from textual.app import App
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.widgets import Input

from forge.config.paths import config_path
from forge.config.store import ConfigStore, LoadResult
from forge.tui.settings import SettingsScreen
from forge.tui.settings.confirm import DiscardChangesScreen

SIZE = (100, 40)
SECRET_KEY = "sk-test-0123456789abcdefSECRET"


class SettingsHost(App[None]):
    """Opens the settings overlay at start and records what it dismisses with."""

    def __init__(self, store: ConfigStore) -> None:
        super().__init__()
        self.store = store
        self.results: list[LoadResult | None] = []

    def on_mount(self) -> None:
        self.push_screen(SettingsScreen(self.store), self.results.append)


def rendered_text(app: App[object]) -> str:
    """Everything the terminal shows right now, as plain text."""
    width, height = app.size
    console = Console(
        width=width, height=height, file=io.StringIO(), record=True, force_terminal=True
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return console.export_text()


def notices(seen: list[Message], severity: str | None = None) -> list[str]:
    """The notifications posted so far, as "title: message" strings."""
    return [
        f"{message.notification.title}: {message.notification.message}"
        for message in seen
        if isinstance(message, Notify)
        and (severity is None or message.notification.severity == severity)
    ]


async def replace_text(pilot: Pilot[object], input_id: str, text: str) -> None:
    """Focus the input, clear it and type `text` key by key."""
    field_input = pilot.app.screen.query_one(f"#{input_id}", Input)
    field_input.focus()
    await pilot.pause()
    field_input.action_end()
    await pilot.press("shift+home", "backspace")
    if text:
        await pilot.press(*text)
    await pilot.pause()


def write_config(text: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def config_file() -> Path:
    return write_config(
        "llm:\n  model: main-model\n  summarization_model: summary-model\n"
        "  base_url: http://127.0.0.1:9/v1\n"
        "context:\n  warning_threshold: 0.8\n"
        "custom_plugin:\n  keep: me\n"
    )


async def test_shows_the_current_values(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        assert screen.query_one("#field-llm-model", Input).value == "main-model"
        assert screen.query_one("#field-llm-summarization_model", Input).value == "summary-model"
        assert screen.query_one("#field-context-warning_threshold", Input).value == "0.8"
        text = rendered_text(app)
        for heading in ("LLM", "Context", "Summarization Model"):
            assert heading in text
        # Further down (the overlay scrolls): every section and field is there.
        titles = [str(title.content) for title in screen.query(".section-title")]
        assert {"LLM", "Context", "Tools"} <= set(titles)
        assert screen.query_one("#field-context-excluded_tools", Input) is not None


async def test_unset_summarization_model_is_empty_with_placeholder() -> None:
    path = write_config("llm:\n  model: main-model\n")
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        field_input = app.screen.query_one("#field-llm-summarization_model", Input)
        assert field_input.value == ""
        assert field_input.placeholder == "same as Model"
        assert "same as Model" in rendered_text(app)


async def test_ctrl_s_saves_atomically_with_mode_0600_and_dismisses(config_file: Path) -> None:
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-llm-model", "new-main")
        await replace_text(pilot, "field-llm-summarization_model", "new-summary")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)
        assert any(notice.startswith("Settings saved") for notice in notices(seen))
    on_disk = yaml.safe_load(config_file.read_text())
    assert on_disk["llm"]["model"] == "new-main"
    assert on_disk["llm"]["summarization_model"] == "new-summary"
    assert on_disk["custom_plugin"] == {"keep": "me"}
    assert stat.S_IMODE(config_file.stat().st_mode) == 0o600
    [result] = app.results
    assert result is not None and result.error is None
    assert result.settings.llm.model == "new-main"
    assert result.settings.llm.effective_summarization_model == "new-summary"
    # No stray temp files from the atomic write (the save's lock file stays).
    left = sorted(p.name for p in config_file.parent.iterdir())
    assert left == [".config.yaml.lock", "config.yaml"]


async def test_clearing_the_summarization_model_unsets_it(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-llm-summarization_model", "")
        await pilot.press("ctrl+s")
        await pilot.pause()
    on_disk = yaml.safe_load(config_file.read_text())
    assert "summarization_model" not in on_disk["llm"]
    [result] = app.results
    assert result is not None
    assert result.settings.llm.summarization_model == ""
    assert result.settings.llm.effective_summarization_model == "main-model"


async def test_invalid_value_is_marked_as_you_type_and_blocks_the_save(config_file: Path) -> None:
    before = config_file.read_bytes()
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-context-warning_threshold", "1.5")
        field_input = app.screen.query_one("#field-context-warning_threshold", Input)
        assert field_input.has_class("-invalid")
        assert "must be in (0, 1]" in rendered_text(app)

        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        errors = notices(seen, "error")
        assert errors and "Warning threshold: must be in (0, 1]" in errors[-1]

        await replace_text(pilot, "field-context-warning_threshold", "0.7")
        assert not field_input.has_class("-invalid")
    assert config_file.read_bytes() == before
    assert app.results == []


async def test_a_rule_spanning_fields_marks_the_field_it_names(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # Raising the warning above the auto-summary threshold makes the latter invalid.
        await replace_text(pilot, "field-context-warning_threshold", "0.95")
        auto_input = app.screen.query_one("#field-context-auto_summary_threshold", Input)
        assert auto_input.has_class("-invalid")
        assert "must be at least context.warning_threshold" in rendered_text(app)
        await replace_text(pilot, "field-context-auto_summary_threshold", "0.97")
        assert not auto_input.has_class("-invalid")


async def test_non_numbers_and_blank_model_are_rejected(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-context-messages_old_threshold", "many")
        await replace_text(pilot, "field-llm-model", "")
        await replace_text(pilot, "field-llm-base_url", "ftp://example")
        text = rendered_text(app)
        assert "must be a whole number" in text
        assert "must not be empty" in text
        assert "must look like http(s)://host[:port][/path]" in text


async def test_lists_are_comma_separated(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-tools-command_allowlist", "git status, ls -la,")
        await replace_text(pilot, "field-context-excluded_tools", "task_completion")
        await pilot.press("ctrl+s")
        await pilot.pause()
    on_disk = yaml.safe_load(config_file.read_text())
    assert on_disk["tools"]["command_allowlist"] == ["git status", "ls -la"]
    assert on_disk["context"]["excluded_tools"] == ["task_completion"]


async def test_escape_without_changes_closes_with_none(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)
    assert app.results == [None]


async def test_escape_with_changes_asks_before_discarding(config_file: Path) -> None:
    before = config_file.read_bytes()
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-llm-model", "typed-but-unsaved")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DiscardChangesScreen)
        assert "Discard unsaved changes?" in rendered_text(app)
        assert "Changed: Model" in rendered_text(app)

        await pilot.press("escape")  # keep editing
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert app.screen.query_one("#field-llm-model", Input).value == "typed-but-unsaved"

        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert not isinstance(app.screen, (SettingsScreen, DiscardChangesScreen))
    assert app.results == [None]
    assert config_file.read_bytes() == before


async def test_retyping_the_same_value_is_not_a_change(config_file: Path) -> None:
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-context-warning_threshold", "0.80")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, (SettingsScreen, DiscardChangesScreen))
    assert app.results == [None]


async def test_failed_save_says_why_and_leaves_the_old_file(config_file: Path) -> None:
    """The config path turns into a directory after the overlay opened: the save must fail."""
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        config_file.unlink()
        config_file.mkdir()
        (config_file / "marker").write_text("untouched")
        await replace_text(pilot, "field-llm-model", "never-saved")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        errors = notices(seen, "error")
        assert errors and "could not save" in errors[-1] and "directory" in errors[-1]
    assert config_file.is_dir()
    assert (config_file / "marker").read_text() == "untouched"
    assert app.results == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
async def test_failed_write_in_a_read_only_directory_keeps_the_old_file(config_file: Path) -> None:
    before = config_file.read_bytes()
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        os.chmod(config_file.parent, 0o500)
        try:
            await replace_text(pilot, "field-llm-model", "never-saved")
            await pilot.press("ctrl+s")
            await pilot.pause()
        finally:
            os.chmod(config_file.parent, 0o700)
        assert isinstance(app.screen, SettingsScreen)
        assert any("could not save" in notice for notice in notices(seen, "error"))
    assert config_file.read_bytes() == before


async def test_file_edited_elsewhere_while_open_is_not_overwritten(config_file: Path) -> None:
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        config_file.write_text("llm:\n  model: edited-in-vim\n")
        await replace_text(pilot, "field-llm-model", "from-overlay")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert any("changed on disk" in notice for notice in notices(seen, "error"))
    assert config_file.read_text() == "llm:\n  model: edited-in-vim\n"


async def test_api_key_is_masked_until_revealed(monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config(f"llm:\n  model: main-model\n  api_key: {SECRET_KEY}\n")
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        key_input = app.screen.query_one("#field-llm-api_key", Input)
        assert key_input.password
        assert SECRET_KEY not in rendered_text(app)
        assert SECRET_KEY[-6:] not in rendered_text(app)
        await pilot.click("#reveal-api-key")
        await pilot.pause()
        assert SECRET_KEY in rendered_text(app)
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert SECRET_KEY not in rendered_text(app)


async def test_environment_values_are_labelled_and_not_written_unless_edited(
    monkeypatch: pytest.MonkeyPatch, config_file: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("FORGE_LLM__MODEL", "env-model")
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert rendered_text(app).count("from environment") == 2
        assert app.screen.query_one("#field-llm-model", Input).value == "env-model"
        await replace_text(pilot, "field-llm-summarization_model", "other-summary")
        await pilot.press("ctrl+s")
        await pilot.pause()
    text = config_file.read_text()
    assert SECRET_KEY not in text
    assert "env-model" not in text
    assert yaml.safe_load(text)["llm"]["model"] == "main-model"  # the file keeps its own value

    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await replace_text(pilot, "field-llm-model", "typed-model")
        assert "will be saved" in rendered_text(app)
        await pilot.press("ctrl+s")
        await pilot.pause()
    on_disk = yaml.safe_load(config_file.read_text())
    assert on_disk["llm"]["model"] == "typed-model"
    assert "api_key" not in on_disk["llm"]


async def test_a_file_with_an_invalid_value_shows_it_and_saves_the_values_shown() -> None:
    path = write_config("llm:\n  model: kept\ncontext:\n  warning_threshold: 3\n")
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        text = rendered_text(app)
        assert "config.yaml:4: context.warning_threshold" in text
        assert "saving writes the values shown" in text
        assert app.screen.query_one("#field-llm-model", Input).value == "kept"
        await replace_text(pilot, "field-llm-model", "other-model")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, SettingsScreen)
    on_disk = yaml.safe_load(path.read_text())
    assert on_disk == {"llm": {"model": "other-model"}, "context": {"warning_threshold": 0.85}}


async def test_a_broken_file_is_shown_and_not_overwritten() -> None:
    path = write_config("context:\n  warning_threshold: [0.5\n")
    before = path.read_bytes()
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(path))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        text = rendered_text(app)
        assert "config.yaml:2: invalid YAML" in text
        assert "Saving is off" in text
        await replace_text(pilot, "field-llm-model", "other-model")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        assert any("Fix the file by hand" in notice for notice in notices(seen, "error"))
    assert path.read_bytes() == before


async def test_a_save_that_lost_the_race_says_the_file_changed(config_file: Path) -> None:
    """Another Forge (or an editor) saved while the overlay was open and no reload came."""
    seen: list[Message] = []
    app = SettingsHost(ConfigStore(config_file))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.pause()
        other = "llm:\n  model: saved-by-another-forge\n"
        config_file.write_text(other)
        await replace_text(pilot, "field-llm-model", "mine")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsScreen)
        [notice] = notices(seen, "error")
        assert notice.startswith("Settings not saved: ")
        assert "the file changed on disk since it was loaded" in notice
    assert config_file.read_text() == other
