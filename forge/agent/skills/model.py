"""What a skill is once read: `Skill`, and `SkillProblem`, a skill that could not be used."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

SKILL_FILE = "SKILL.md"
SKILL_DIR_PLACEHOLDER = "${SKILL_DIR}"


@dataclass(frozen=True, slots=True)
class Skill:
    """One valid skill: its front matter, its body and where it was found."""

    name: str
    description: str
    path: Path
    """The `SKILL.md` file."""
    body: str
    scope: str
    """"project" or "user": a project skill's `allowed-tools` count only in a trusted
    workspace."""
    location: str
    """The folder it was found in, as people read it (".forge/skills", "~/.agents/skills")."""
    size: int
    """Bytes of `SKILL.md`."""
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    user_invocable: bool = True
    """False (`user-invocable: false`): no `/name` command."""
    model_invocable: bool = True
    """False (`disable-model-invocation: true`): not listed to the model, nor loadable by it."""
    argument_hint: str = ""

    @property
    def directory(self) -> Path:
        """The skill's folder (what `${SKILL_DIR}` becomes)."""
        return self.path.parent

    def expanded_body(self) -> str:
        """The body with `${SKILL_DIR}` replaced by the skill's folder."""
        return self.body.replace(SKILL_DIR_PLACEHOLDER, str(self.directory)).strip("\n")


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A skill left out, or a clash: the file, the rule it broke, and a sentence for people."""

    path: Path
    rule: str
    """A short fixed id of the rule: "name-format", "description-length", "size", …"""
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"
