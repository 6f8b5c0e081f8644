"""A session's skills, made once when it is built: the catalog and the listing its system
prompt holds (the one in the header of a resumed session, else a new one saved there)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from forge.agent.history.session_file import SessionLog
from forge.agent.skills.catalog import SkillCatalog
from forge.agent.skills.listing import SKILLS_HEADER_KEY, SkillListing, build_listing
from forge.agent.skills.model import Skill
from forge.agent.skills.trust_source import skill_source
from forge.agent.trust.gate import WorkspaceTrust
from forge.llm.messages import Message


@dataclass(frozen=True, slots=True)
class SessionSkills:
    """The catalog, the listing and what to tell the user about them at start."""

    catalog: SkillCatalog
    listing: str
    notices: tuple[str, ...]


def session_skills(
    workspace: Path,
    log: SessionLog,
    *,
    window_tokens: int,
    count: Callable[[str], int],
    max_file_bytes: int,
    disabled: Iterable[str],
    listing_share: float,
    trust: WorkspaceTrust | None,
    messages: Sequence[Message] = (),
) -> SessionSkills:
    """The skills of the session `log` records. A resumed session keeps the listing its
    header holds (the prompt's bytes do not move); a new one's is built within
    `listing_share` of `window_tokens` and put in the header. The skills whose text a resumed
    conversation (`messages`) holds count as loaded again."""

    def trusted(skill: Skill) -> bool:
        return trust is not None and trust.permits(skill_source(workspace, skill))

    catalog = SkillCatalog(
        workspace, max_file_bytes=max_file_bytes, disabled=disabled, trusted=trusted
    )
    notices = [str(problem) for problem in catalog.refresh_problems()]
    if messages:
        catalog.restore_loaded(messages)
    stored = log.header.get(SKILLS_HEADER_KEY)
    if isinstance(stored, str):
        return SessionSkills(catalog, stored, tuple(notices))
    listing: SkillListing = build_listing(
        catalog.for_model(),
        workspace,
        budget_tokens=max(1, int(window_tokens * listing_share)),
        count=count,
    )
    log.add_to_header({SKILLS_HEADER_KEY: listing.text})
    if listing.notice():
        notices.append(listing.notice())
    return SessionSkills(catalog, listing.text, tuple(notices))
