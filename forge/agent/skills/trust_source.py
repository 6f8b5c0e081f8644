"""Project skills' `allowed-tools` as workspace definitions behind the trust gate.

A project skill that pre-approves tools lets the workspace decide what runs without asking,
so, like `.forge/mcp.yaml`, it counts only in a trusted workspace (docs/adr/0034, 0046). Each
project skills folder holding such a skill is one `ProgramSource` (one "program" per skill,
its entries shown), so the trust dialog, `/trust` and `forge trust` list it, and a changed
entry asks again.
"""

from __future__ import annotations

from pathlib import Path

from forge.agent.skills.discovery import discover_skills, skill_roots
from forge.agent.skills.model import Skill
from forge.agent.trust.programs import ProgramSource, WorkspaceProgram, fingerprint_of


def project_skill_sources(
    workspace: Path, max_file_bytes: int | None = None
) -> list[ProgramSource]:
    """One source per project skills folder with a skill that has `allowed-tools` (none when
    no project skill pre-approves anything)."""
    sources = []
    for root in skill_roots(workspace)[:3]:
        kwargs = {} if max_file_bytes is None else {"max_file_bytes": max_file_bytes}
        found = discover_skills([root], **kwargs)
        granting = [skill for skill in found.skills.values() if skill.allowed_tools]
        if granting:
            sources.append(_source(root.label, granting))
    return sources


def skill_source(workspace: Path, skill: Skill) -> ProgramSource:
    """The source a project skill's `allowed-tools` are trusted under (its folder's)."""
    for root in skill_roots(workspace)[:3]:
        if root.label == skill.location:
            found = discover_skills([root])
            granting = [item for item in found.skills.values() if item.allowed_tools]
            return _source(root.label, granting)
    return _source(skill.location, [skill])


def _source(label: str, skills: list[Skill]) -> ProgramSource:
    programs = tuple(
        WorkspaceProgram(
            name=f"skill {skill.name}", command="pre-approves " + " ".join(skill.allowed_tools)
        )
        for skill in sorted(skills, key=lambda item: item.name)
    )
    definitions = {skill.name: list(skill.allowed_tools) for skill in skills}
    return ProgramSource(file=label, programs=programs, fingerprint=fingerprint_of(definitions))
