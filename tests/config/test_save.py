"""Saving: atomic, private, minimal, and never clobbering what the user did not ask to change."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
import yaml

from forge.config.errors import ConfigSaveError
from forge.config.paths import config_path
from forge.config.settings import Settings
from forge.config.store import ConfigStore, load_settings, mask_secret, save_settings

REPO_ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _file_data(path: Path) -> object:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _with(settings: Settings, **changes: dict[str, object]) -> Settings:
    """A copy of `settings` with some sections partly replaced."""
    updates = {
        section: getattr(settings, section).model_copy(update=values)
        for section, values in changes.items()
    }
    return settings.model_copy(update=updates)


def test_first_save_writes_only_changed_values_private_and_reloadable() -> None:
    previous = load_settings()
    settings = _with(previous.settings, llm={"model": "gpt-big"}, ui={"show_reasoning": False})
    save_settings(settings, previous, {"llm.model", "ui.show_reasoning"})
    path = config_path()
    assert _file_data(path) == {"llm": {"model": "gpt-big"}, "ui": {"show_reasoning": False}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    # No temp file left; the lock file stays (removing it would race).
    assert sorted(entry.name for entry in path.parent.iterdir()) == [
        ".config.yaml.lock",
        "config.yaml",
    ]
    assert load_settings().settings == settings


def test_unknown_keys_and_explicit_defaults_survive_a_save() -> None:
    path = _write(
        config_path(),
        "plugins:\n  enabled: [a, b]\nllm:\n  model: gpt-4o-mini\n  future_option: yes\n",
    )
    previous = load_settings(path)
    save_settings(_with(previous.settings, ui={"theme": "nord"}), previous, {"ui.theme"})
    assert _file_data(path) == {
        "plugins": {"enabled": ["a", "b"]},
        "llm": {"model": "gpt-4o-mini", "future_option": True},
        "ui": {"theme": "nord"},
    }


def test_environment_values_are_not_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGE_LLM__MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-0000")
    monkeypatch.setenv("FORGE_CONTEXT__MAX_TOKENS", "5000")
    previous = load_settings()
    settings = _with(previous.settings, ui={"theme": "nord"})
    save_settings(settings, previous, {"ui.theme"})
    text = config_path().read_text()
    assert "env-model" not in text
    assert "sk-env-secret" not in text
    assert "max_tokens" not in text
    assert _file_data(config_path()) == {"ui": {"theme": "nord"}}


def test_file_value_shadowed_by_environment_is_kept_as_the_file_had_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = _write(config_path(), "llm:\n  model: file-model\n")
    monkeypatch.setenv("FORGE_LLM__MODEL", "env-model")
    previous = load_settings(path)
    save_settings(_with(previous.settings, ui={"theme": "nord"}), previous, {"ui.theme"})
    assert _file_data(path) == {"llm": {"model": "file-model"}, "ui": {"theme": "nord"}}


def test_environment_key_the_user_edited_is_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORGE_LLM__MODEL", "env-model")
    previous = load_settings()
    save_settings(_with(previous.settings, llm={"model": "typed-in-ui"}), previous, {"llm.model"})
    assert _file_data(config_path()) == {"llm": {"model": "typed-in-ui"}}


def test_cleared_summarization_model_is_removed_from_the_file() -> None:
    path = _write(config_path(), "llm:\n  model: m\n  summarization_model: small\n")
    previous = load_settings(path)
    assert previous.settings.llm.effective_summarization_model == "small"
    cleared = _with(previous.settings, llm={"summarization_model": ""})
    save_settings(cleared, previous, {"llm.summarization_model"})
    assert _file_data(path) == {"llm": {"model": "m"}}
    assert load_settings(path).settings.llm.effective_summarization_model == "m"


def test_api_key_is_written_only_when_the_user_set_it() -> None:
    previous = load_settings()
    with_key = _with(previous.settings, llm={"api_key": "sk-typed-1234"})
    save_settings(with_key, previous, {"ui.theme"})
    assert "sk-typed" not in config_path().read_text()

    save_settings(with_key, load_settings(), {"llm.api_key"})
    assert _file_data(config_path()) == {"llm": {"api_key": "sk-typed-1234"}}
    assert stat.S_IMODE(config_path().stat().st_mode) == 0o600

    # Already in the file: kept on later saves of other keys.
    previous = load_settings()
    save_settings(_with(previous.settings, ui={"theme": "nord"}), previous, {"ui.theme"})
    assert _file_data(config_path()) == {
        "llm": {"api_key": "sk-typed-1234"},
        "ui": {"theme": "nord"},
    }


def test_saving_over_a_file_with_an_invalid_value_writes_the_value_shown() -> None:
    """The invalid value ran as its default, which /settings showed; saving writes that."""
    path = _write(config_path(), "context:\n  warning_threshold: 5\n# keep me\n")
    previous = load_settings(path)
    assert previous.save_blocked is None
    save_settings(_with(previous.settings, ui={"theme": "nord"}), previous, {"ui.theme"})
    assert _file_data(path) == {"context": {"warning_threshold": 0.85}, "ui": {"theme": "nord"}}
    assert "# keep me" in path.read_text()
    assert load_settings(path).error is None


@pytest.mark.parametrize(
    "text", ["ui: [broken\n", "- a list\n", "llm: !!python/object/apply:os.system [true]\n"]
)
def test_save_refuses_to_overwrite_a_file_it_cannot_parse(text: str) -> None:
    path = _write(config_path(), text)
    previous = load_settings(path)
    assert previous.save_blocked is not None
    with pytest.raises(ConfigSaveError, match=r"config\.yaml:1.*fix it by hand"):
        save_settings(_with(previous.settings, ui={"theme": "nord"}), previous, {"ui.theme"})
    assert path.read_text() == text


def test_save_refuses_when_the_file_changed_on_disk_since_loading() -> None:
    path = _write(config_path(), "ui:\n  theme: nord\n")
    previous = load_settings(path)
    _write(path, "ui:\n  theme: gruvbox\n# edited by hand meanwhile\n")
    with pytest.raises(ConfigSaveError, match="changed on disk"):
        save_settings(_with(previous.settings, llm={"model": "x"}), previous, {"llm.model"})
    assert path.read_text() == "ui:\n  theme: gruvbox\n# edited by hand meanwhile\n"

    _write(path, "ui: [broken\n")
    with pytest.raises(ConfigSaveError, match="changed on disk"):
        save_settings(previous.settings, previous, set())
    assert path.read_text() == "ui: [broken\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_failed_write_into_read_only_directory_leaves_old_file() -> None:
    path = _write(config_path(), "ui:\n  theme: nord\n")
    previous = load_settings(path)
    path.parent.chmod(0o500)
    try:
        with pytest.raises(ConfigSaveError):
            save_settings(_with(previous.settings, llm={"model": "x"}), previous, {"llm.model"})
    finally:
        path.parent.chmod(0o700)
    assert path.read_text() == "ui:\n  theme: nord\n"


def test_failed_write_midway_leaves_old_file_and_no_temp_file(isolated_environment: Path) -> None:
    """A real write failure (file size limit, EFBIG) in a child process."""
    path = _write(config_path(), "ui:\n  theme: nord\n")
    script = textwrap.dedent(
        """
        import resource, signal, sys
        from forge.config.errors import ConfigSaveError
        from forge.config.store import load_settings, save_settings
        previous = load_settings()
        settings = previous.settings.model_copy(
            update={"llm": previous.settings.llm.model_copy(update={"model": "m" * 500})}
        )
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))
        try:
            save_settings(settings, previous, {"llm.model"})
        except ConfigSaveError as error:
            print("refused:", error)
            sys.exit(0)
        sys.exit("saved despite the size limit")
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script],
        env=dict(os.environ),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "refused: could not save" in completed.stdout
    assert path.read_text() == "ui:\n  theme: nord\n"
    assert sorted(entry.name for entry in path.parent.iterdir()) == [
        ".config.yaml.lock",
        "config.yaml",
    ]


def test_path_that_is_a_directory_fails_cleanly(tmp_path: Path) -> None:
    target = tmp_path / "target.yaml"
    previous = load_settings(target)  # missing: fine
    (target / "inside").mkdir(parents=True)  # now a non-empty directory stands there
    with pytest.raises(ConfigSaveError):
        save_settings(previous.settings, previous, set())
    assert (target / "inside").is_dir()


def test_save_writes_through_a_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = _write(tmp_path / "dotfiles" / "forge.yaml", "ui:\n  theme: nord\n")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    monkeypatch.setenv("FORGE_CONFIG", str(link))
    previous = load_settings()
    save_settings(_with(previous.settings, llm={"model": "x"}), previous, {"llm.model"})
    assert link.is_symlink()
    assert _file_data(real) == {"ui": {"theme": "nord"}, "llm": {"model": "x"}}


def test_readers_never_see_a_torn_file() -> None:
    """A reader polling during many saves always parses either the old or the new file."""
    store = ConfigStore()
    store.save(_with(store.current.settings, llm={"model": "model-0"}), {"llm.model"})
    seen: set[str] = set()
    problems: list[str] = []
    stop = threading.Event()

    def read_repeatedly() -> None:
        while not stop.is_set():
            data = yaml.safe_load(config_path().read_text())
            if not isinstance(data, dict):
                problems.append(repr(data))
                continue
            seen.add(data["llm"]["model"])

    reader = threading.Thread(target=read_repeatedly)
    reader.start()
    try:
        for round_number in range(1, 60):
            settings = _with(store.current.settings, llm={"model": f"model-{round_number}"})
            store.save(settings, {"llm.model"})
    finally:
        stop.set()
        reader.join()
    assert problems == []
    assert seen <= {f"model-{number}" for number in range(60)}
    assert store.current.settings.llm.model == "model-59"


def test_config_store_remembers_what_it_wrote() -> None:
    store = ConfigStore()
    assert store.current.file_data == {}
    assert store.last_written_digest is None
    result = store.save(_with(store.current.settings, ui={"theme": "nord"}), {"ui.theme"})
    assert result is store.current
    assert result.settings.ui.theme == "nord"
    assert store.last_written_digest is not None


@pytest.mark.parametrize(
    ("secret", "masked"),
    [
        ("", "(not set)"),
        ("sk-proj-abcdefghijklmnopwxyz", "sk-…wxyz"),
        ("abcdefghijklmnop", "…mnop"),
        ("short", "…t"),
        ("abc", "…"),
    ],
)
def test_mask_secret(secret: str, masked: str) -> None:
    assert mask_secret(secret) == masked


def test_a_save_keeps_the_users_hooks_as_written() -> None:
    """Hooks are lists of sections: a save (a skill toggled, /settings) must write them as
    the plain data the user wrote, not fail on the section objects."""
    path = _write(
        config_path(),
        textwrap.dedent(
            """\
            hooks:
              PreToolUse:
                - matcher: Write
                  hooks:
                    - type: command
                      command: ./guard.sh
            """
        ),
    )
    previous = load_settings()
    settings = _with(previous.settings, skills={"disabled": ["x"]})
    save_settings(settings, previous, {"skills.disabled"})
    assert _file_data(path) == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Write", "hooks": [{"type": "command", "command": "./guard.sh"}]}
            ]
        },
        "skills": {"disabled": ["x"]},
    }
    assert load_settings().settings == settings
