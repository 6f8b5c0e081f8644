"""The core never imports Textual or Rich.

Two checks. In a fresh interpreter, import every module of forge.config, forge.llm,
forge.context, forge.agent, forge.session, forge.headless and forge.acp (`forge run` and
`forge acp` are no Textual apps either) and look at `sys.modules`. One allowance, measured
rather than assumed: httpx's `__init__` imports its command-line module, which loads Rich
whenever click, pygments and Rich are all installed (true in the dev environment, where
uvicorn brings click).
So the probe first imports httpx alone, and then demands that Forge's core adds no Textual
module at all and no Rich module beyond httpx's. Second, a static scan: no core source file
has an import statement naming textual or rich.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CORE_PACKAGES = (
    "forge.config",
    "forge.llm",
    "forge.context",
    "forge.agent",
    "forge.session",
    "forge.headless",
    "forge.acp",
)
FORBIDDEN = ("textual", "rich")

_PROBE = """
import importlib, json, pkgutil, sys

def forbidden_loaded():
    return {{
        name for name in sys.modules
        if any(name == root or name.startswith(root + ".") for root in {forbidden!r})
    }}

import httpx  # noqa: the measured allowance (see the test's docstring)
baseline = forbidden_loaded()
imported = []
for package_name in {packages!r}:
    package = importlib.import_module(package_name)
    imported.append(package_name)
    for module in pkgutil.walk_packages(package.__path__, prefix=package_name + "."):
        importlib.import_module(module.name)
        imported.append(module.name)
added = sorted(forbidden_loaded() - baseline)
textual = sorted(name for name in forbidden_loaded() if name.split(".")[0] == "textual")
print(json.dumps({{"imported": imported, "added": added, "textual": textual}}))
"""


def probe(packages: tuple[str, ...]) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(packages=packages, forbidden=FORBIDDEN)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_core_packages_never_import_textual_or_rich() -> None:
    report = probe(CORE_PACKAGES)
    assert report["textual"] == []
    assert report["added"] == []
    # The probe really walked the packages (a broken walk would pass vacuously).
    imported = set(report["imported"])
    assert {"forge.agent.turn.loop", "forge.headless.run", "forge.llm.openai_provider"} <= imported
    assert len(imported) > 30


def test_the_probe_detects_a_forbidden_import() -> None:
    report = probe(("forge.tui",))
    assert "textual" in report["textual"]
    assert report["added"]


def test_no_core_source_names_textual_or_rich() -> None:
    offenders: list[str] = []
    for package in CORE_PACKAGES:
        directory = REPO_ROOT.joinpath(*package.split("."))
        for path in sorted(directory.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                for name in names:
                    if name.split(".")[0] in FORBIDDEN:
                        offenders.append(f"{path.relative_to(REPO_ROOT)}: {name}")
    assert offenders == []


def test_the_anthropic_sdk_loads_only_when_an_anthropic_provider_is_made() -> None:
    """It takes seconds to import; an OpenAI-compatible session never needs it (docs/adr/0037)."""
    code = (
        "import sys, forge.session.build, forge.tui.app\n"
        "print('anthropic' in sys.modules)\n"
        "from forge.llm.anthropic_provider import AnthropicProvider\n"
        "AnthropicProvider('claude-haiku-4-5', 'http://127.0.0.1:9', 'sk-x')\n"
        "print('anthropic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
