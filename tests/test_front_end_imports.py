"""The only core modules each front end may import (issue 21, docs/adr/0041).

`forge.tui` and `forge.headless` drive a session through `forge.session` and read the shared
vocabulary (events, messages, settings, reports); the engine — the loop, its tools, the context
manager and its strategies, the providers — is reached only through the session. import-linter
forbids the engine (pyproject.toml); this test names, module by module, everything else a
front end imports, so a new reach into the core is a decision made here, not an accident.
"""

from __future__ import annotations

import grimp
import pytest

SHARED = {
    # The session: the front ends' API.
    "forge.session.attention",  # the bell and desktop notice each front end gives (ADR 0049)
    "forge.session.build",
    "forge.session.core",
    "forge.session.events",
    "forge.session.parts",
    # The vocabulary: events, messages, reports, modes, settings.
    "forge.agent.costs",
    "forge.agent.input.custom_commands",
    "forge.agent.events",
    "forge.agent.exit_signals",
    "forge.agent.logs",
    "forge.agent.mcp.notices",
    "forge.agent.history.session_file",
    "forge.agent.trust",
    "forge.agent.trust.programs",
    "forge.agent.trust.sources",
    "forge.config.prices",
    "forge.config.settings",
    "forge.config.store",
    "forge.context.plan",
    "forge.llm.messages",
    "forge.text_safety",
}

ALLOWED = {
    "forge.tui": SHARED
    | {
        "forge.session.restore",  # /undo and /rewind plan, ask, then restore (ADR 0041)
        "forge.agent.turn.interruption",  # the resumed history's "not run" rows
        "forge.agent.input.mentions",  # the resumed history's attachment rows
        "forge.agent.message_meta",  # what a recorded message keeps for the chat (ADR 0048)
        "forge.agent.modes",
        "forge.agent.input.shell_escape",  # parsing the `!` line
        "forge.agent.skills.catalog",  # /skills: the statuses, `skills.disabled` globs
        "forge.agent.skills.commands",  # the skills' /name table (builtin > custom > skill)
        "forge.agent.subagents.definitions",  # a task row's title (TASK_TOOL)
        "forge.agent.subagents.mentions",  # the resumed history's `@agent-` message as typed
        "forge.agent.mcp.project_watch",
        "forge.agent.mcp.report",
        "forge.agent.sandbox.report",  # /sandbox's lines (ADR 0053)
        "forge.agent.sandbox.state",  # SandboxState, the status pane's sandbox line
        "forge.agent.history.session_search",  # the /sessions picker's full-text filter (ADR 0058)
        "forge.agent.history.session_fork",  # /fork (ADR 0058)
        "forge.config.secrets",  # /export masks known secrets again
        "forge.agent.tools.diffs",  # rendering a diff
        "forge.agent.tools.ignore",  # @-completion skips what the tools skip
        "forge.config.errors",
        "forge.config.keys",
        "forge.config.load_report",
        "forge.config.provider_keys",
        "forge.config.watcher",
        "forge.context.plan_pin",
        "forge.llm.model_list",  # the error `list_models` raises
        "forge.llm.protocols",  # the token counter's protocol (/context's breakdown)
    },
    "forge.headless": SHARED
    | {
        "forge.agent.turn.answers",  # what a question gets when nobody can answer
        "forge.agent.sandbox.approval",  # an unconfined request's reason, to refuse it
        "forge.agent.error_kinds",
        "forge.config.ephemeral",
        "forge.config.secrets",
        "forge.llm.stream",  # the usage record's fields
        "forge.unicode_repair",  # the task's invalid bytes, repaired (ADR 0047)
    },
    # `forge acp` (docs/adr/0044): the session and the vocabulary it translates to ACP.
    "forge.acp": {
        "forge.agent.history.session_search",  # session/list's search (ADR 0058)
        "forge.agent.history.session_fork",  # session/fork (ADR 0058)
        "forge.session.trust_changes",  # a trusted definition that changed (ADR 0047)
        "forge.session.attention",  # the `_forge/attention` notice's words (ADR 0049)
        "forge.session.build",
        "forge.session.core",
        "forge.session.events",
        "forge.session.parts",
        "forge.agent.input.custom_commands",
        "forge.agent.events",
        "forge.agent.logs",
        "forge.agent.message_meta",  # a loaded session as it was shown (ADR 0048)
        "forge.agent.modes",
        "forge.agent.history.session_file",
        "forge.agent.trust",
        "forge.agent.trust.programs",  # the editor's MCP servers as a source to trust
        "forge.agent.trust.sources",  # the workspace files kept trusted beside them
        "forge.agent.sandbox.report",  # /sandbox's lines (ADR 0053)
        "forge.config.provider_keys",  # whether a key is configured (session/new's error)
        "forge.config.secrets",  # masking what is sent to the editor
        "forge.config.settings",
        "forge.config.store",
        "forge.context.plan",
        "forge.llm.messages",
        "forge.unicode_repair",  # the editor's lone surrogates, repaired at the pipe (ADR 0047)
    },
}


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


@pytest.mark.parametrize("front_end", sorted(ALLOWED))
def test_a_front_end_imports_only_the_core_modules_named_here(
    graph: grimp.ImportGraph, front_end: str
) -> None:
    unexpected = _imported_core_modules(graph, front_end) - ALLOWED[front_end]
    assert unexpected == set(), f"{front_end} imports core modules not on its list"


@pytest.mark.parametrize("front_end", sorted(ALLOWED))
def test_the_lists_hold_nothing_unused(graph: grimp.ImportGraph, front_end: str) -> None:
    # A module the front end stopped importing comes off its list (the list stays true).
    unused = ALLOWED[front_end] - _imported_core_modules(graph, front_end)
    assert unused == set()


def test_the_tui_restores_files_only_through_the_session(graph: grimp.ImportGraph) -> None:
    # /undo and /rewind plan, ask about conflicts and restore through `Session.plan_restore`
    # and `Session.restore`; the checkpoint store and the log's turn reader stay behind them.
    reached = _imported_core_modules(graph, "forge.tui")
    assert reached & {"forge.agent.history.checkpoints", "forge.agent.history.rewind"} == set()
