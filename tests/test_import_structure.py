"""Forge's import structure (issue 21): no module imports itself back through others — not
even under `TYPE_CHECKING` — so each package reads top-down. import-linter keeps the layers;
this test keeps the cycles out (grimp, import-linter's own graph library, counts imports under
`if TYPE_CHECKING:` too), and no module imports another's private names (issue 36)."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

import forge


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_in_forge() -> None:
    assert _cycles(grimp.build_graph("forge")) == []


def _private_imports(package: Path) -> list[str]:
    """`from forge.x import _name` (or a relative one) anywhere under `package`: a module
    reaching for another's private name, which that module may change without notice."""
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if not (node.level or (node.module or "").split(".")[0] == package.name):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{path}:{node.lineno} imports {alias.name}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    assert _private_imports(Path(forge.__file__).parent) == []


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    package = tmp_path / "forge"
    (package / "agent").mkdir(parents=True)
    (package / "agent" / "rewind.py").write_text(
        "from forge.agent.history.session_file import SessionLog, _read_records\n"
        "from . import _local\n"
    )
    assert _private_imports(package) == [
        f"{package / 'agent' / 'rewind.py'}:1 imports _read_records",
        f"{package / 'agent' / 'rewind.py'}:2 imports _local",
    ]
