"""`SkillCatalog`: a session's skills as they are on disk now, the user's disabled ones, and
the skills loaded in the session (whose `allowed-tools` count while they are loaded)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from forge.agent.skills.discovery import MAX_FILE_BYTES, SkillRoot, discover_skills, skill_roots
from forge.agent.skills.model import Skill, SkillProblem
from forge.llm.messages import Message


def is_disabled(name: str, patterns: Iterable[str]) -> bool:
    """Whether `skills.disabled` (names or globs, e.g. "pdf-*") covers skill `name`."""
    return any(fnmatchcase(name, pattern.strip()) for pattern in patterns if pattern.strip())


@dataclass(frozen=True, slots=True)
class SkillStatus:
    """A skill as `/skills` shows it."""

    skill: Skill
    enabled: bool
    loaded: bool


class SkillCatalog:
    """The skills of one session: re-read from disk on `refresh` (between turns, when the
    `skill` tool or a `/name` looks one up), each problem reported once."""

    def __init__(
        self,
        workspace: Path,
        *,
        roots: Sequence[SkillRoot] | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
        disabled: Iterable[str] = (),
        trusted: Callable[[Skill], bool] = lambda skill: False,
    ) -> None:
        """`trusted(skill)`: whether the workspace trusts a project skill's `allowed-tools`
        now (`forge.agent.skills.trust_source`); they count only then."""
        self.workspace = workspace
        self.roots = list(roots) if roots is not None else skill_roots(workspace)
        self.max_file_bytes = max_file_bytes
        self.disabled: tuple[str, ...] = tuple(disabled)
        self.trusted = trusted
        self.skills: dict[str, Skill] = {}
        self.problems: list[SkillProblem] = []
        self._reported: set[str] = set()
        self._loaded: dict[str, Skill] = {}
        self._first = self.refresh()

    def refresh_problems(self) -> list[SkillProblem]:
        """The problems of the first read (once; later calls return none)."""
        first, self._first = self._first, []
        return first

    def refresh(self) -> list[SkillProblem]:
        """Read the folders again; the problems not reported before (each is said once)."""
        found = discover_skills(self.roots, max_file_bytes=self.max_file_bytes)
        self.skills, self.problems = found.skills, found.problems
        new = [problem for problem in found.problems if str(problem) not in self._reported]
        self._reported.update(str(problem) for problem in new)
        return new

    # --- views ---------------------------------------------------------------------------------
    def enabled(self, name: str) -> bool:
        """Whether skill `name` is not disabled by `skills.disabled`."""
        return not is_disabled(name, self.disabled)

    def usable(self) -> list[Skill]:
        """The enabled skills, by name."""
        return [skill for name, skill in sorted(self.skills.items()) if self.enabled(name)]

    def for_model(self) -> list[Skill]:
        """The skills the model may load (enabled, without `disable-model-invocation`), in
        precedence order: project skills first."""
        order = {root.label: index for index, root in enumerate(self.roots)}
        usable = [skill for skill in self.usable() if skill.model_invocable]
        return sorted(usable, key=lambda skill: (order.get(skill.location, 99), skill.name))

    def for_user(self) -> list[Skill]:
        """The skills runnable as `/name` (enabled, not `user-invocable: false`)."""
        return [skill for skill in self.usable() if skill.user_invocable]

    def statuses(self) -> list[SkillStatus]:
        """Every valid skill, enabled or not, for `/skills`."""
        return [
            SkillStatus(skill, self.enabled(name), name in self._loaded)
            for name, skill in sorted(self.skills.items())
        ]

    # --- loading -------------------------------------------------------------------------------
    def mark_loaded(self, skill: Skill) -> None:
        """`skill` was loaded in the session (the `skill` tool returned it, or the user ran
        `/name`): its `allowed-tools` count from now on."""
        self._loaded[skill.name] = skill

    def loaded(self) -> list[Skill]:
        """The skills loaded in the session, in the order they were loaded."""
        return list(self._loaded.values())

    def restore_loaded(self, messages: Sequence[Message]) -> None:
        """Mark loaded the skills whose text `messages` holds (a resumed session's)."""
        from forge.agent.skills.loading import missing_from

        missing = {skill.name for skill in missing_from(messages, list(self.skills.values()))}
        for name, skill in sorted(self.skills.items()):
            if name not in missing:
                self._loaded.setdefault(name, skill)

    def keep_loaded_in(self, messages: Sequence[Message]) -> None:
        """Keep loaded only the skills whose text `messages` still holds (after a rewind)."""
        from forge.agent.skills.loading import missing_from

        for skill in missing_from(messages, list(self._loaded.values())):
            del self._loaded[skill.name]

    def granted_tools(self) -> list[str]:
        """The `allowed-tools` entries of the loaded, enabled skills: a user skill's always, a
        project skill's only while the workspace is trusted."""
        entries: list[str] = []
        for skill in self._loaded.values():
            if not self.enabled(skill.name) or not skill.allowed_tools:
                continue
            if skill.scope == "project" and not self.trusted(skill):
                continue
            entries.extend(skill.allowed_tools)
        return entries

    def readable_directories(self) -> list[Path]:
        """The folders of the loaded skills: `read_file` and `list_files` may read in them
        (read-only) even outside the workspace."""
        return [skill.directory for skill in self._loaded.values()]
