"""The system prompt: the tools, the workspace, the loop-breaking rules, and `AGENTS.md`."""

from __future__ import annotations

from pathlib import Path

from forge.agent.system_prompt import (
    MAX_PROJECT_INSTRUCTIONS_CHARS,
    build_system_prompt,
    read_project_instructions,
)
from forge.agent.tools.registry import default_registry

TOOLS = default_registry().specs()


def test_names_every_tool_and_the_workspace(workspace: Path) -> None:
    prompt = build_system_prompt(workspace, TOOLS)
    tools_line = next(line for line in prompt.splitlines() if line.startswith("Your tools:"))
    assert {name.strip(" .") for name in tools_line.split(":", 1)[1].split(",")} == {
        spec.name for spec in TOOLS
    }
    assert f"Workspace: {workspace}" in prompt
    # The turn-ending tools are explained, so the model knows how to stop.
    for name in ("task_completion", "converse", "ask_question"):
        assert f"`{name}`" in prompt


def test_includes_agents_md_from_the_workspace_root(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("# Rules\nRun `make check` before finishing.\n")
    prompt = build_system_prompt(workspace, TOOLS)
    assert "Project instructions from AGENTS.md" in prompt
    assert prompt.rstrip().endswith("Run `make check` before finishing.")


def test_without_agents_md_there_is_no_instructions_section(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "AGENTS.md").write_text("only the root file counts")
    prompt = build_system_prompt(workspace, TOOLS)
    assert "Project instructions" not in prompt
    assert "only the root file counts" not in prompt


def test_a_huge_agents_md_is_cut_and_says_so(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("x" * (MAX_PROJECT_INSTRUCTIONS_CHARS + 500))
    text = read_project_instructions(workspace)
    assert text.startswith("x" * MAX_PROJECT_INSTRUCTIONS_CHARS)
    assert text.endswith("[… 500 more characters omitted]")


def test_an_agents_md_directory_is_ignored(workspace: Path) -> None:
    (workspace / "AGENTS.md").mkdir()
    assert read_project_instructions(workspace) == ""


def test_headless_prompt_says_nobody_can_answer(workspace: Path) -> None:
    assert "No user is watching" not in build_system_prompt(workspace, TOOLS)
    assert "No user is watching" in build_system_prompt(workspace, TOOLS, interactive=False)
