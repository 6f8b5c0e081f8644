"""Finding skills: the five folders, the agentskills.io rules, and who wins a clash.

Searched in this order, the first skill of a name winning (a project beats the user):
`<workspace>/.forge/skills`, `<workspace>/.agents/skills`, `<workspace>/.claude/skills`
(project), `$XDG_CONFIG_HOME/forge/skills` and `~/.agents/skills` (user). A skill is a folder
`<name>/SKILL.md` whose YAML front matter holds `name` (1-64 characters of
`^[a-z0-9]+(-[a-z0-9]+)*$`, equal to the folder's name) and `description` (1-1024
characters), optionally `license`, `compatibility` (at most 500 characters), `metadata` (text
values) and `allowed-tools`. Every skill that breaks a rule is left out with a `SkillProblem`
naming its file and the rule; nothing is dropped silently. Never raises.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.agent.skills.model import SKILL_FILE, Skill, SkillProblem

MAX_FILE_BYTES = 256 * 1024
"""The default of `skills.max_file_bytes`."""
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class SkillRoot:
    """One folder skills are looked for in."""

    directory: Path
    scope: str
    label: str


def skill_roots(
    workspace: Path, *, user_config_dir: Path | None = None, home: Path | None = None
) -> list[SkillRoot]:
    """The five folders, in precedence order (the first wins a clash)."""
    home = home if home is not None else Path.home()
    if user_config_dir is None:
        value = os.environ.get("XDG_CONFIG_HOME", "")
        base = Path(value) if value and os.path.isabs(value) else home / ".config"
        user_config_dir = base / "forge"
    return [
        SkillRoot(workspace / ".forge" / "skills", "project", ".forge/skills"),
        SkillRoot(workspace / ".agents" / "skills", "project", ".agents/skills"),
        SkillRoot(workspace / ".claude" / "skills", "project", ".claude/skills"),
        SkillRoot(user_config_dir / "skills", "user", str(user_config_dir / "skills")),
        SkillRoot(home / ".agents" / "skills", "user", "~/.agents/skills"),
    ]


@dataclass(slots=True)
class DiscoveredSkills:
    """The valid skills by name (precedence applied) and every problem found."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[SkillProblem] = field(default_factory=list)


def discover_skills(
    roots: Iterable[SkillRoot], *, max_file_bytes: int = MAX_FILE_BYTES
) -> DiscoveredSkills:
    """Every skill under `roots` (in precedence order); a name seen again is a clash,
    reported with the skill that wins."""
    found = DiscoveredSkills()
    for root in roots:
        for folder in _skill_folders(root, found.problems):
            try:
                skill = read_skill(folder / SKILL_FILE, root, max_file_bytes=max_file_bytes)
            except SkillFileError as error:
                found.problems.append(error.problem)
                continue
            winner = found.skills.get(skill.name)
            if winner is not None:
                found.problems.append(
                    SkillProblem(
                        skill.path,
                        "clash",
                        f"skill {skill.name!r} is also defined in {winner.location} "
                        f"({winner.path}), which wins",
                    )
                )
                continue
            found.skills[skill.name] = skill
    return found


def _skill_folders(root: SkillRoot, problems: list[SkillProblem]) -> list[Path]:
    try:
        if not root.directory.is_dir():
            return []
        return sorted(
            entry
            for entry in root.directory.iterdir()
            if entry.is_dir() and (entry / SKILL_FILE).is_file()
        )
    except OSError as error:
        problems.append(
            SkillProblem(root.directory, "read", f"cannot list skills: {error.strerror or error}")
        )
        return []


class SkillFileError(ValueError):
    """A `SKILL.md` that cannot be used; `problem` names the file and the rule."""

    def __init__(self, problem: SkillProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def read_skill(path: Path, root: SkillRoot, *, max_file_bytes: int = MAX_FILE_BYTES) -> Skill:
    """The skill in `path` (`<root>/<name>/SKILL.md`); `SkillFileError` for one breaking a
    rule."""
    import yaml  # here: the TUI imports this module before its first frame

    def fail(rule: str, detail: str) -> SkillFileError:
        return SkillFileError(SkillProblem(path, rule, detail))

    try:
        with path.open("rb") as handle:  # never more than the cap plus one byte
            data = handle.read(max_file_bytes + 1)
        if len(data) > max_file_bytes:
            raise fail(
                "size", f"larger than {max_file_bytes:,} bytes (skills.max_file_bytes); not loaded"
            )
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise fail("read", f"cannot read it: {reason}") from None
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise fail("front-matter", "no front matter (`---` lines with name and description)")
    try:
        meta = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise fail("front-matter", f"malformed front matter{where}") from None
    if not isinstance(meta, dict):
        raise fail("front-matter", "the front matter must be `key: value` lines")
    name = _text(meta, "name", fail)
    if not name:
        raise fail("name-missing", "`name` is missing or empty")
    if len(name) > MAX_NAME_CHARS:
        raise fail("name-length", f"`name` has {len(name)} characters (at most {MAX_NAME_CHARS})")
    if not NAME_PATTERN.match(name):
        raise fail(
            "name-format",
            f"`name` {name!r} must be lower-case letters, digits and single hyphens "
            "(^[a-z0-9]+(-[a-z0-9]+)*$)",
        )
    if name != path.parent.name:
        raise fail(
            "name-folder", f"`name` {name!r} differs from its folder's name {path.parent.name!r}"
        )
    description = _text(meta, "description", fail)
    if not description:
        raise fail("description-missing", "`description` is missing or empty")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise fail(
            "description-length",
            f"`description` has {len(description)} characters (at most {MAX_DESCRIPTION_CHARS})",
        )
    compatibility = _text(meta, "compatibility", fail)
    if len(compatibility) > MAX_COMPATIBILITY_CHARS:
        raise fail(
            "compatibility-length",
            f"`compatibility` has {len(compatibility)} characters "
            f"(at most {MAX_COMPATIBILITY_CHARS})",
        )
    return Skill(
        name=name,
        description=" ".join(description.split()),
        path=path,
        body=text[match.end() :],
        scope=root.scope,
        location=root.label,
        size=len(data),
        license=_text(meta, "license", fail),
        compatibility=compatibility,
        metadata=_metadata(meta.get("metadata"), fail),
        allowed_tools=_allowed_tools(meta.get("allowed-tools"), fail),
        user_invocable=_flag(meta, "user-invocable", True, fail),
        model_invocable=not _flag(meta, "disable-model-invocation", False, fail),
        argument_hint=_text(meta, "argument-hint", fail),
    )


def _text(meta: dict[Any, Any], key: str, fail: Any) -> str:
    value = meta.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise fail("field-type", f"`{key}` must be text")
    return str(value).strip()


def _flag(meta: dict[Any, Any], key: str, default: bool, fail: Any) -> bool:
    value = meta.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise fail("field-type", f"`{key}` must be true or false")
    return value


def _metadata(value: Any, fail: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(key, str) and isinstance(item, str | int | float) for key, item in value.items()
    ):
        raise fail("metadata", "`metadata` must map names to text values")
    return {key: str(item) for key, item in value.items()}


def _allowed_tools(value: Any, fail: Any) -> tuple[str, ...]:
    """The spec's space-separated string; Claude Code's comma-separated one and a YAML list
    are read too. `Bash(git add:*)` stays one entry (spaces inside parentheses)."""
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    if not isinstance(value, str):
        raise fail("allowed-tools", "`allowed-tools` must be a space-separated text")
    return tuple(match.group(0).rstrip(",") for match in _TOOL_ENTRY.finditer(value))


_TOOL_ENTRY = re.compile(r"[^\s,(]+(?:\([^)]*\))?")
