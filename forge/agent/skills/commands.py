"""`/name args` for a skill: the user runs it as a command (docs/adr/0046).

Built-in commands win over custom commands, which win over skills; `skill_commands` leaves out
a skill whose name is taken and says so once per clash.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from forge.agent.skills.catalog import SkillCatalog
from forge.agent.skills.loading import loaded_text
from forge.agent.skills.model import Skill


@dataclass(frozen=True, slots=True)
class SkillCommands:
    """The skills runnable as `/name`, by name, and a line per name a command took."""

    skills: dict[str, Skill]
    clashes: tuple[str, ...]


def skill_commands(
    catalog: SkillCatalog, *, builtin: Iterable[str] = (), custom: Iterable[str] = ()
) -> SkillCommands:
    """The user-invocable skills of `catalog` whose names no built-in or custom command has."""
    builtin_names = {name.lower() for name in builtin}
    custom_names = {name.lower() for name in custom}
    skills: dict[str, Skill] = {}
    clashes = []
    for skill in catalog.for_user():
        if skill.name in builtin_names:
            clashes.append(f"{skill.path}: /{skill.name} is a built-in command; the built-in wins")
        elif skill.name in custom_names:
            clashes.append(
                f"{skill.path}: /{skill.name} is also a custom command; the custom command wins"
            )
        else:
            skills[skill.name] = skill
    return SkillCommands(skills, tuple(clashes))


def parse_skill_command(text: str) -> tuple[str, str] | None:
    """("name", "args") when `text` is "/name args" (a name a skill could have), else None."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, arguments = stripped[1:].partition(" ")
    head = head.strip()
    return (head, arguments) if head else None


def run_skill_command(catalog: SkillCatalog, skill: Skill, arguments: str) -> str:
    """The user message for `/name arguments`; the skill counts as loaded from now on."""
    catalog.mark_loaded(skill)
    return loaded_text(skill, arguments)


def expand_skill_command(
    catalog: SkillCatalog, text: str, *, taken: Iterable[str] = ()
) -> tuple[Skill, str] | None:
    """When `text` is "/name args" naming a skill the user may run (read from disk afresh)
    whose name no command in `taken` has: the skill and the message to send (the skill counts
    as loaded). None otherwise."""
    parsed = parse_skill_command(text)
    if parsed is None:
        return None
    name, arguments = parsed
    if name.lower() in {item.lower() for item in taken}:
        return None
    catalog.refresh()
    skill = next((item for item in catalog.for_user() if item.name == name), None)
    if skill is None:
        return None
    return skill, run_skill_command(catalog, skill, arguments)
