"""The TUI's modules form no import cycle, and none imports the app (issue 21): helpers take
the parts they need or post messages, instead of taking the app back as a parameter. Imports
under `TYPE_CHECKING` count too."""

from __future__ import annotations

import grimp


def tui_graph() -> grimp.ImportGraph:
    return grimp.build_graph("forge", include_external_packages=False)


def test_no_import_cycle_inside_forge_tui() -> None:
    graph = tui_graph()
    modules = sorted(m for m in graph.modules if m.startswith("forge.tui"))
    cycles = [
        (module, imported)
        for module in modules
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if imported.startswith("forge.tui")
        and graph.chain_exists(importer=imported, imported=module)
    ]
    assert not cycles, f"import cycles inside forge.tui: {cycles}"


def test_no_tui_module_imports_the_app() -> None:
    graph = tui_graph()
    importers = graph.find_modules_that_directly_import("forge.tui.app")
    inside = sorted(m for m in importers if m.startswith("forge.tui"))
    assert inside == [], f"{inside} import forge.tui.app"
