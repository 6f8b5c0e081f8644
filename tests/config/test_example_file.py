"""config.example.yaml stays true: every key, every default, and nothing else."""

from __future__ import annotations

from pathlib import Path

from forge.config.keys import dotted_keys, leaf_values
from forge.config.settings import Settings
from forge.config.store import load_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.yaml"


def test_example_documents_every_key_with_its_default() -> None:
    result = load_settings(EXAMPLE)
    assert result.error is None
    assert dotted_keys(result.file_data) == set(leaf_values(Settings()))
    assert result.settings == Settings()


def test_every_key_in_the_example_has_a_comment_above_it() -> None:
    lines = EXAMPLE.read_text().splitlines()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not stripped.endswith(":"):
            assert lines[index - 1].strip().startswith("#"), f"no comment above {stripped!r}"
