"""A child agent's system prompt: its definition's body, where it works, how it reports, and
the project's AGENTS.md (docs/adr/0045)."""

from __future__ import annotations

import os
import platform
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from forge.agent.subagents.definitions import AgentDefinition
from forge.agent.system_prompt import project_instructions_section

CHILD_RULES = """\
You are a subagent: another agent gave you this task and reads only your final report, not \
your tool calls. Nobody can answer questions. Paths are relative to the workspace. Work with \
your tools, then call `task_completion` with the report as its result: what you found or did, \
with the exact paths and facts the other agent needs. If you cannot finish, report what you \
found so far and what is left."""


def child_system_prompt(
    definition: AgentDefinition, workspace: Path, tools: Sequence[str], today: date | None = None
) -> str:
    """The system prompt of a child running `definition` in `workspace` with `tools`."""
    shell = os.environ.get("SHELL") or "/bin/sh"
    system = f"{platform.system()} {platform.release()}".strip()
    sections = [
        definition.prompt.strip(),
        CHILD_RULES,
        (
            "Environment:\n"
            f"- Workspace: {workspace}\n"
            f"- Operating system: {system}\n"
            f"- Shell: {shell}\n"
            f"- Today: {(today or date.today()).isoformat()}"
        ),
    ]
    if tools:
        sections.append(f"Your tools: {', '.join(tools)}.")
    if (instructions := project_instructions_section(workspace)) is not None:
        sections.append(instructions)
    return "\n\n".join(sections)
