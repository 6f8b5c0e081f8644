"""The config rows of the fault matrix (issue 11) that other files do not already hold.

Root-proof: the suite runs as root in CI, where a chmod-ed directory stays writable, so the
read-only and failing-write cases use places even root cannot write to.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml

from forge.config.errors import ConfigSaveError
from forge.config.paths import config_path
from forge.config.settings import Settings
from forge.config.store import load_settings, save_settings
from tests.config.test_watcher import running_watcher


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _with_model(settings: Settings, model: str) -> Settings:
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"model": model})})


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs sysfs")
def test_a_read_only_directory_refuses_the_save_even_for_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """sysfs refuses new files to everyone, root included."""
    monkeypatch.setenv("FORGE_CONFIG", "/sys/kernel/forge-config.yaml")
    previous = load_settings()
    assert previous.error is None  # a missing file is fine to load
    with pytest.raises(ConfigSaveError, match=r"could not save /sys/kernel/forge-config\.yaml"):
        save_settings(_with_model(previous.settings, "x"), previous, {"llm.model"})
    assert not Path("/sys/kernel/forge-config.yaml").exists()


def test_a_write_that_fails_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name at the filesystem's limit: the file exists, but nothing longer can be created
    beside it (the lock and temp files add to the name), for root too."""
    directory = tmp_path / "long"
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    path = _write(directory / ("c" * (limit - 5) + ".yaml"), "# mine\nui:\n  theme: nord\n")
    monkeypatch.setenv("FORGE_CONFIG", str(path))
    previous = load_settings()
    assert previous.settings.ui.theme == "nord"
    with pytest.raises(ConfigSaveError, match="too long"):
        save_settings(_with_model(previous.settings, "x"), previous, {"llm.model"})
    assert path.read_text() == "# mine\nui:\n  theme: nord\n"
    assert [entry.name for entry in directory.iterdir()] == [path.name]


def test_a_directory_replaced_by_a_file_after_loading_refuses_the_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "conf" / "config.yaml", "ui:\n  theme: nord\n")
    monkeypatch.setenv("FORGE_CONFIG", str(path))
    previous = load_settings()
    path.parent.rename(tmp_path / "moved")
    path.parent.write_text("now a file\n")
    with pytest.raises(ConfigSaveError, match="is a regular file"):
        save_settings(_with_model(previous.settings, "x"), previous, {"llm.model"})
    assert path.parent.read_text() == "now a file\n"
    assert (tmp_path / "moved" / "config.yaml").read_text() == "ui:\n  theme: nord\n"


def test_a_symlinked_config_is_saved_into_its_target_and_keeps_the_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = "# from my dotfiles\nui:\n  theme: nord\n"
    target = _write(tmp_path / "dotfiles" / "forge.yaml", original)
    target.chmod(0o600)
    link = tmp_path / "config" / "config.yaml"
    link.parent.mkdir()
    link.symlink_to(target)
    monkeypatch.setenv("FORGE_CONFIG", str(link))
    previous = load_settings()
    save_settings(_with_model(previous.settings, "x"), previous, {"llm.model"})
    assert link.is_symlink() and link.resolve() == target
    assert target.read_text() == "# from my dotfiles\nui:\n  theme: nord\nllm:\n  model: x\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    # The lock sits beside the file really written.
    assert (target.parent / ".forge.yaml.lock").exists()
    assert sorted(entry.name for entry in link.parent.iterdir()) == ["config.yaml"]


async def test_the_watcher_follows_a_symlinked_config_to_its_target_folder(
    tmp_path: Path,
) -> None:
    """Dotfile managers link config.yaml to a file elsewhere; editing that file reloads."""
    target = _write(tmp_path / "dotfiles" / "forge.yaml", "llm:\n  model: initial\n")
    link = config_path()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    async with running_watcher(link) as watching:
        # An editor saving the target: a new file renamed over it, in the target's folder.
        replacement = target.with_name(".forge.yaml.new")
        replacement.write_text("llm:\n  model: edited-at-the-target\n")
        os.replace(replacement, target)
        result = await watching.next_matching("edited-at-the-target")
        assert result.path == link
    assert link.is_symlink()


def test_wrong_types_and_out_of_range_values_each_fall_back_alone() -> None:
    text = (
        "llm:\n  model: kept\n  max_retries: many\n  request_timeout: -5\n"
        "ui:\n  show_reasoning: perhaps\n  theme: kept-theme\n"
        "context:\n  excluded_tools: converse\n  max_tokens: 0\n"
    )
    result = load_settings(_write(config_path(), text))
    assert [str(problem) for problem in result.problems] == [
        "config.yaml:4: llm.request_timeout: must be a positive number of seconds",
        "config.yaml:3: llm.max_retries: Input should be a valid integer, "
        "unable to parse string as an integer",
        "config.yaml:10: context.max_tokens: must be a positive whole number",
        "config.yaml:9: context.excluded_tools: Input should be a valid list",
        "config.yaml:6: ui.show_reasoning: Input should be a valid boolean, "
        "unable to interpret input",
    ]
    defaults = Settings()
    assert result.settings.llm.model == "kept"
    assert result.settings.ui.theme == "kept-theme"
    assert result.settings.llm.max_retries == defaults.llm.max_retries
    assert result.settings.llm.request_timeout == defaults.llm.request_timeout
    assert result.settings.ui.show_reasoning == defaults.ui.show_reasoning
    assert result.settings.context.excluded_tools == defaults.context.excluded_tools
    assert result.settings.context.max_tokens is None
    assert yaml.safe_load(config_path().read_text())["llm"]["max_retries"] == "many"
