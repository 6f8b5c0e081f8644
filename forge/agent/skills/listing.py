"""The skills' listing in the system prompt: name, description and path of each skill the
model may load, capped at a share of the context window.

Computed once when a session starts and saved in its header (`SKILLS_HEADER_KEY`), so the
prompt's bytes stay the same across turns and `--continue` (docs/adr/0046-skills.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge.agent.skills.model import Skill

SKILLS_HEADER_KEY = "skills_listing"
"""The session header field holding the listing the session started with."""
SHORTENED_DESCRIPTION_CHARS = (200, 100, 50)
"""The description lengths tried, in turn, when the listing is over its share."""

_INTRO = (
    "Skills (instructions for particular tasks; before such a task call `skill` with the "
    "skill's name to load them, then follow them):"
)
_LEFT_OUT = "More skills exist; calling `skill` with an unknown name lists them all."


def estimate_tokens(text: str) -> int:
    """A generous token count without the tokenizer (whose tables load in the background
    after the first frame, docs/adr/0042): one token per 3 bytes of UTF-8, where English text
    averages about 4 characters a token, so the listing stays under its share."""
    return -(-len(text.encode("utf-8")) // 3)


@dataclass(frozen=True, slots=True)
class SkillListing:
    """The listing's text ("" with no skill), and what the cap cost."""

    text: str
    shortened: bool = False
    left_out: tuple[str, ...] = ()

    def notice(self) -> str:
        """A sentence for the user when the cap shortened or left out anything ("" if not)."""
        if self.left_out:
            return (
                "The skills' listing is capped at its share of the context window: "
                f"descriptions shortened and {len(self.left_out)} left out "
                f"({', '.join(self.left_out)}); the model can still load them by name."
            )
        if self.shortened:
            return (
                "The skills' listing is capped at its share of the context window: "
                "descriptions shortened."
            )
        return ""


def build_listing(
    skills: Sequence[Skill],
    workspace: Path,
    *,
    budget_tokens: int,
    count: Callable[[str], int],
) -> SkillListing:
    """The listing of `skills` (in precedence order) within `budget_tokens` as `count`s it:
    whole when it fits, else with descriptions shortened, else with the last skills left out
    (the user's after the project's)."""
    if not skills:
        return SkillListing("")
    text = _render(skills, workspace, None, left_out=False)
    if count(text) <= budget_tokens:
        return SkillListing(text)
    for limit in SHORTENED_DESCRIPTION_CHARS:
        text = _render(skills, workspace, limit, left_out=False)
        if count(text) <= budget_tokens:
            return SkillListing(text, shortened=True)
    kept = list(skills)
    limit = SHORTENED_DESCRIPTION_CHARS[-1]
    while kept:
        kept.pop()
        text = _render(kept, workspace, limit, left_out=True)
        if count(text) <= budget_tokens or not kept:
            break
    left_out = tuple(skill.name for skill in skills[len(kept) :])
    return SkillListing(text if kept else _LEFT_OUT, shortened=True, left_out=left_out)


def _render(skills: Sequence[Skill], workspace: Path, limit: int | None, *, left_out: bool) -> str:
    lines = [_INTRO]
    for skill in skills:
        description = skill.description
        if limit is not None and len(description) > limit:
            description = description[: limit - 1].rstrip() + "…"
        lines.append(f"- {skill.name}: {description} ({_shown_path(skill.path, workspace)})")
    if left_out:
        lines.append(_LEFT_OUT)
    return "\n".join(lines)


def _shown_path(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)
