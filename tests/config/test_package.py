"""`forge.config` re-exports its public names lazily (importing `forge.config.paths` before
the first frame must not load pydantic-settings)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import forge.config


def test_every_public_name_resolves_to_its_module() -> None:
    for name in forge.config.__all__:
        value = getattr(forge.config, name)
        assert value.__module__.startswith("forge.config."), name
    with pytest.raises(AttributeError):
        forge.config.not_a_name  # noqa: B018


def test_the_paths_module_does_not_load_the_settings() -> None:
    probe = (
        "import json, sys; import forge.config.paths; "
        "print(json.dumps(['forge.config.settings' in sys.modules, 'pydantic' in sys.modules]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [False, False]
