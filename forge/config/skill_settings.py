"""The `skills:` section of the settings: agentskills.io skills (docs/adr/0046-skills.md)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from forge.config.field_docs import DocumentedModel


class SkillsSettings(DocumentedModel):
    """Skills: `SKILL.md` folders in `.forge/skills/`, `.agents/skills/`, `.claude/skills/`
    (project), the user's `skills/` config folder and `~/.agents/skills/`."""

    model_config = ConfigDict(extra="ignore", validate_default=True)
    """As every section of `Settings` (`forge.config.settings`)."""

    max_file_bytes: int = Field(default=256 * 1024, gt=0)
    """Bytes of one `SKILL.md`; a larger one is left out with a warning naming it."""
    disabled: list[str] = []
    """Skills neither listed to the model nor runnable, by name or glob (`/skills` toggles)."""
    listing_share: float = Field(default=0.02, gt=0, le=0.2)
    """The most of the context window the skills' listing in the system prompt may take."""
