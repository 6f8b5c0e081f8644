"""Skills as the front ends list and run them (docs/adr/0046, 0059 Part 5): the session's
catalogue (`session.skills`), each skill's state, whether the settings disable it, and the
`/name` commands the skills offer beside the built-in and custom ones.

Finding and reading the skills stays in `forge.agent.skills`.
"""

from __future__ import annotations

from forge.agent.skills.catalog import SkillCatalog, SkillStatus, is_disabled
from forge.agent.skills.commands import skill_commands

__all__ = ["SkillCatalog", "SkillStatus", "is_disabled", "skill_commands"]
