"""What the front ends may not reach even through the allowlist (docs/adr/0041, 0059).

The allowlist itself — `forge.session`, `forge.config`, `forge.text_safety`, the vocabulary,
and each reach into the engine not yet moved behind the session, one line each — is the
import-linter contract in pyproject.toml (`make contracts`), which also fails on a line that
matches no import, so the list stays true.
"""

from __future__ import annotations

import grimp
import pytest


def _imported_core_modules(graph: grimp.ImportGraph, front_end: str) -> set[str]:
    own = {module for module in graph.modules if module.startswith(front_end)}
    return {
        imported
        for module in own
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.startswith("forge.") and imported not in own
    }


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("forge")


def test_the_tui_restores_files_only_through_the_session(graph: grimp.ImportGraph) -> None:
    # /undo and /rewind plan, ask about conflicts and restore through `Session.plan_restore`
    # and `Session.restore`; the checkpoint store and the log's turn reader stay behind them.
    reached = _imported_core_modules(graph, "forge.tui")
    assert reached & {"forge.agent.history.checkpoints", "forge.agent.history.rewind"} == set()


# The engine modules a front end may import: the vocabulary only (docs/adr/0059 Part 5).
# Anything else a front end needs is a `Session` verb or role or a `forge.session` module.
VOCABULARY = {
    "forge.agent.costs",
    "forge.agent.error_kinds",
    "forge.agent.events",
    "forge.agent.exit_signals",
    "forge.agent.mcp.naming",
    "forge.agent.mcp.notices",
    "forge.agent.message_meta",
    "forge.agent.modes",
    "forge.context.events",
    "forge.context.plan",
    "forge.llm.image_parts",
    "forge.llm.messages",
    "forge.llm.stream",
}
ENGINE = ("forge.agent", "forge.context", "forge.llm")


@pytest.mark.parametrize("front_end", ["forge.tui", "forge.headless", "forge.acp"])
def test_a_front_end_imports_no_engine_module_but_the_vocabulary(
    graph: grimp.ImportGraph, front_end: str
) -> None:
    # The import-linter allowlist could grow a line again; this names the modules it may hold.
    reached = _imported_core_modules(graph, front_end)
    engine = {module for module in reached if module.split(".")[:2] in _split(ENGINE)}
    assert engine - VOCABULARY == set()


def _split(packages: tuple[str, ...]) -> list[list[str]]:
    return [package.split(".") for package in packages]
