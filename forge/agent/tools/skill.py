"""`skill`: load a skill's instructions by name (read-only, no approval; docs/adr/0046).

The system prompt lists the skills (name, description, path); this tool returns one's body
with `${SKILL_DIR}` expanded and marks it loaded in the session, so its `allowed-tools` count
and `read_file`/`list_files` may read its folder. The skills are read from disk again at each
call, so a skill added since the session started loads by name; an unknown name is an error
listing every skill the model may load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.skills.catalog import SkillCatalog
from forge.agent.skills.loading import loaded_text
from forge.agent.tools.arguments import ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.llm.protocols import ToolSpec

SKILL_TOOL = "skill"


class SkillArgs(ToolArguments):
    """`skill`'s arguments."""

    name: str = Field(description="The skill's name, as listed.")
    arguments: str | None = Field(
        default=None, description="Optional text for the skill's $ARGUMENTS."
    )


class SkillTool(ModelTool[SkillArgs]):
    """Returns a skill's instructions and marks it loaded."""

    spec = ToolSpec(
        name=SKILL_TOOL,
        description=(
            "Load a skill's instructions by name (the skills are listed in the system "
            "prompt). Read them and follow them; the skill's other files are under its folder."
        ),
        parameters=tool_schema(SkillArgs),
    )
    arguments_model = SkillArgs

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "skill: pdf-forms"."""
        return f"{SKILL_TOOL}: {str(arguments.get('name') or '').strip()}".rstrip(": ")

    async def run(self, args: SkillArgs, context: ToolContext) -> ToolResult:
        """The skill's text; `ToolError` for an unknown, disabled or user-only skill."""
        catalog = self.catalog
        await asyncio.to_thread(catalog.refresh)  # reads the skills' folders
        name = args.name.strip()
        skill = catalog.skills.get(name)
        if skill is None or not catalog.enabled(name) or not skill.model_invocable:
            if skill is None:
                reason = f"unknown skill {name!r}"
            elif not catalog.enabled(name):
                reason = f"skill {name!r} is disabled by the user"
            else:
                reason = f"skill {name!r} can only be run by the user (/{name})"
            available = [f"{item.name} ({item.description})" for item in catalog.for_model()]
            listed = "; ".join(available) if available else "none"
            raise ToolError(f"{reason}; available skills: {listed}")
        catalog.mark_loaded(skill)
        return ToolResult(
            content=loaded_text(skill, args.arguments or ""),
            metadata={"skill": skill.name, "path": str(skill.path)},
        )
