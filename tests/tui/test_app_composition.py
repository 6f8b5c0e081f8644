"""`ForgeApp` is composed of controllers, not assembled from mixins (docs/adr/0059 part 4):
its only base is Textual's `App`, and no class in `forge/tui` stubs another's members under
`TYPE_CHECKING` (the slash-command runner's two handler mixins are the stated exception until
the command catalogue replaces them)."""

from __future__ import annotations

import ast
from pathlib import Path

from textual.app import App

import forge.tui
from forge.tui.app import ForgeApp

TUI = Path(forge.tui.__file__).parent
STUB_EXCEPTIONS = {"checkpoint_commands.py", "session_commands.py"}


def test_the_app_has_no_mixin_bases() -> None:
    assert ForgeApp.__bases__ == (App,)


def test_no_tui_class_stubs_another_ones_members() -> None:
    stubs = []
    for path in sorted(TUI.rglob("*.py")):
        if path.name in STUB_EXCEPTIONS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for item in node.body:
                guarded = isinstance(item, ast.If) and ast.unparse(item.test) == "TYPE_CHECKING"
                if guarded and any(
                    isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef) for inner in item.body
                ):
                    stubs.append(f"{path.relative_to(TUI)}: {node.name}")
    assert stubs == []
