"""`forge.config` re-exports nothing (one import spelling per name), and importing
`forge.config.paths` before the first frame does not load pydantic-settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import forge.config


def test_the_package_re_exports_nothing() -> None:
    with pytest.raises(AttributeError):
        forge.config.Settings  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(forge.config, "__getattr__")


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
