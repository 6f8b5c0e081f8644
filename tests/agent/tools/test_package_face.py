"""`forge.agent.tools` re-exports nothing (ADR 0040): each name has one import spelling, its
defining module's, and importing the package (as the exit-signal handling does for
`process_guard` before the first frame) loads no tool, no pydantic model and no jsonschema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import forge.agent.tools

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_the_package_has_no_re_exports() -> None:
    public = [name for name in vars(forge.agent.tools) if not name.startswith("__")]
    assert public == [] or all(
        type(vars(forge.agent.tools)[name]).__name__ == "module" for name in public
    )
    assert not hasattr(forge.agent.tools, "__getattr__")


def test_the_signal_handling_import_loads_no_tool() -> None:
    probe = (
        "import json, sys; import forge.agent.exit_signals; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith("
        "('forge.agent.tools.registry', 'forge.agent.tools.arguments', 'forge.agent.tools.read', "
        "'forge.agent.mcp', 'pydantic', 'jsonschema')))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
