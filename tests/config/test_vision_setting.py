"""`llm.vision` (docs/adr/0055, part 2): auto, on or off, and YAML's booleans — `true`/`false`
and `on`/`off`, which YAML 1.1 reads as booleans — read from a real config file."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge.config.store import load_settings


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("auto", "auto"),
        ("on", "on"),
        ("off", "off"),
        ("true", "on"),
        ("false", "off"),
        ("ON", "on"),
    ],
)
def test_vision_reads_words_and_yaml_booleans(tmp_path: Path, written: str, read: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"llm:\n  vision: {written}\n", encoding="utf-8")
    result = load_settings(path)
    assert result.error is None
    assert result.settings.llm.vision == read


def test_another_word_is_an_error_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("llm:\n  vision: sometimes\n", encoding="utf-8")
    result = load_settings(path)
    assert result.error is not None
    assert any("vision" in detail for detail in result.error.details)
