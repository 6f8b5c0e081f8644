"""Where hooks are defined and what each definition says (docs/adr/0043).

Three places, in this order (the order decides which `updatedInput` wins):
1. the user's config (`hooks:` in config.yaml, `forge.config.settings.HooksSettings`);
2. `.forge/hooks.json` in the workspace: `{"hooks": {EVENT: [MATCHER GROUP, …]}}`;
3. the `hooks` key of the workspace's `.claude/settings.json` (Claude Code's project file).

The shape is Claude Code's: a matcher group is `{"matcher": REGEX, "hooks": [{"type":
"command", "command": "…", "timeout": SECONDS}]}`. Bad input never stops the rest from
loading: each problem becomes a warning naming the file and the field (a JSON syntax error
with line and column), and only the entry at fault is left out — or, for a bad timeout, runs
with the default.

Workspace files define programs, so each becomes a trust `ProgramSource` (docs/adr/0034):
its hooks run only when `WorkspaceTrust.permits` that source.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge.agent.hooks.events import EVENT_NAMES, HookEvent
from forge.agent.hooks.matching import compile_matcher
from forge.agent.trust.programs import ProgramSource, WorkspaceProgram, fingerprint_of
from forge.config.hook_settings import HooksSettings

DEFAULT_TIMEOUT_SECONDS = 60.0
"""A hook's timeout when its entry gives none (Claude Code's default)."""
MAX_FILE_BYTES = 1024 * 1024
"""A hooks file larger than this is refused with a warning (a hooks file is a few lines)."""
FORGE_HOOKS_FILE = ".forge/hooks.json"
"""Forge's project hooks file, relative to the workspace."""
CLAUDE_SETTINGS_FILE = ".claude/settings.json"
"""Claude Code's project settings, whose `hooks` key Forge reads too."""
PROJECT_HOOK_FILES = (FORGE_HOOKS_FILE, CLAUDE_SETTINGS_FILE)
"""The workspace files that may define hooks, in config order."""
HOOK_KEYS = frozenset({"type", "command", "timeout"})
"""The keys of one hook entry that Forge reads; others are reported and ignored."""
GROUP_KEYS = frozenset({"matcher", "hooks"})
"""The keys of one matcher group."""


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One hook to run: a shell command, where it came from, and its limit."""

    command: str
    """The shell command, run with `/bin/sh -c` in the workspace."""
    timeout: float
    """Seconds before its process group is killed."""
    origin: str
    """The file that defines it (config path, ".forge/hooks.json", ".claude/settings.json")."""
    project: bool
    """Whether the workspace defines it (then it runs only in a trusted workspace)."""
    matcher: str = ""
    """The matcher of its group, as written (for listings)."""

    @property
    def name(self) -> str:
        """How the hook is named to people: its origin and command."""
        return f"{self.origin}: {self.command}"


@dataclass(frozen=True, slots=True)
class MatcherGroup:
    """The hooks of one event that run when `pattern` matches."""

    event: HookEvent
    matcher: str
    """As written; "" or "*" matches everything."""
    pattern: re.Pattern[str] | None
    """Compiled `matcher`; None matches everything."""
    commands: tuple[HookCommand, ...]


@dataclass(frozen=True)
class HookFile:
    """The hooks one place defines, as read now."""

    origin: str
    """The file as shown to people (workspace-relative for project files)."""
    project: bool
    groups: tuple[MatcherGroup, ...] = ()
    warnings: tuple[str, ...] = ()
    """Each problem of the file, naming file and field; the rest of the file still loads."""
    definitions: Mapping[str, Any] = field(default_factory=dict)
    """The raw `hooks` mapping (fingerprinted for trust)."""

    @property
    def source(self) -> ProgramSource:
        """What the file would run, for the workspace trust gate and its dialog."""
        programs = tuple(
            WorkspaceProgram(
                name=f"{group.event.value} hook"
                + (f" ({group.matcher})" if group.matcher.strip() not in ("", "*") else ""),
                command=hook.command,
            )
            for group in self.groups
            for hook in group.commands
        )
        return ProgramSource(self.origin, programs, fingerprint_of(dict(self.definitions)))


def user_hooks(settings: HooksSettings, origin: str) -> HookFile:
    """The hooks of the user's config (`origin` names the config file in warnings). Unknown
    event names there are already reported by the config loader as unknown keys."""
    definitions = {
        name: [group.model_dump(exclude_unset=True) for group in getattr(settings, name)]
        for name in (event.value for event in HookEvent)
        if getattr(settings, name)
    }
    groups, warnings = parse_definitions(definitions, origin, project=False, prefix="hooks")
    return HookFile(origin, False, groups, warnings, definitions)


def project_hooks(workspace: Path) -> list[HookFile]:
    """The hooks of each project file that exists in `workspace`, in config order."""
    files = []
    for relative in PROJECT_HOOK_FILES:
        path = workspace / relative
        if path.is_file():
            files.append(read_hook_file(path, relative))
    return files


def read_hook_file(path: Path, origin: str) -> HookFile:
    """The hooks of one JSON file (its top-level `hooks` key). A file that cannot be read or
    parsed defines no hooks and says why, with the line and column of a syntax error."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return _broken(origin, f"larger than {MAX_FILE_BYTES} bytes; its hooks are not loaded")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return _broken(origin, f"cannot be read ({reason}); its hooks are not loaded")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"{origin}:{error.lineno}:{error.colno}"
        return HookFile(
            origin,
            True,
            warnings=(f"{where}: not valid JSON ({error.msg}); its hooks are not loaded",),
        )
    if not isinstance(data, dict):
        return _broken(origin, "is not a JSON object; its hooks are not loaded")
    definitions = data.get("hooks")
    if definitions is None:
        return HookFile(origin, True)
    if not isinstance(definitions, dict):
        return _broken(origin, "`hooks` is not an object; its hooks are not loaded")
    groups, warnings = parse_definitions(definitions, origin, project=True, prefix="hooks")
    return HookFile(origin, True, groups, warnings, definitions)


def _broken(origin: str, problem: str) -> HookFile:
    return HookFile(origin, True, warnings=(f"{origin}: {problem}",))


def parse_definitions(
    definitions: Mapping[str, Any], origin: str, *, project: bool, prefix: str
) -> tuple[tuple[MatcherGroup, ...], tuple[str, ...]]:
    """The matcher groups of an event → groups mapping, and a warning per entry left out."""
    groups: list[MatcherGroup] = []
    warnings: list[str] = []
    for name, entries in definitions.items():
        where = f"{origin}: {prefix}.{name}"
        if name not in EVENT_NAMES:
            close = difflib.get_close_matches(str(name), sorted(EVENT_NAMES), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            known = ", ".join(event.value for event in HookEvent)
            warnings.append(f"{where}: unknown event{hint}; ignored. Events: {known}")
            continue
        if not isinstance(entries, list):
            warnings.append(f"{where}: must be a list of matcher groups; ignored")
            continue
        for index, entry in enumerate(entries):
            group = _group(HookEvent(name), entry, f"{where}[{index}]", origin, project, warnings)
            if group is not None:
                groups.append(group)
    return tuple(groups), tuple(warnings)


def _group(
    event: HookEvent, entry: Any, where: str, origin: str, project: bool, warnings: list[str]
) -> MatcherGroup | None:
    if not isinstance(entry, dict):
        warnings.append(f"{where}: must be an object with `matcher` and `hooks`; ignored")
        return None
    _unknown_keys(entry, GROUP_KEYS, where, warnings)
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        warnings.append(f"{where}.matcher: must be a string (a regex); this group is ignored")
        return None
    try:
        pattern = compile_matcher(matcher)
    except re.error as error:
        warnings.append(
            f"{where}.matcher: invalid regex {matcher!r} ({error}); this group is ignored"
        )
        return None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list):
        warnings.append(f"{where}.hooks: must be a list of hooks; this group is ignored")
        return None
    commands = [
        command
        for index, hook in enumerate(hooks)
        if (
            command := _command(hook, f"{where}.hooks[{index}]", origin, project, matcher, warnings)
        )
        is not None
    ]
    return MatcherGroup(event, matcher, pattern, tuple(commands)) if commands else None


def _command(
    hook: Any, where: str, origin: str, project: bool, matcher: str, warnings: list[str]
) -> HookCommand | None:
    if not isinstance(hook, dict):
        warnings.append(f"{where}: must be an object with `type` and `command`; ignored")
        return None
    _unknown_keys(hook, HOOK_KEYS, where, warnings)
    kind = hook.get("type", "command")
    if kind != "command":
        warnings.append(f'{where}.type: {kind!r} is not supported (only "command"); ignored')
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{where}.command: missing or empty; ignored")
        return None
    return HookCommand(
        command, _timeout(hook.get("timeout"), where, warnings), origin, project, matcher
    )


def _timeout(value: Any, where: str, warnings: list[str]) -> float:
    if value is None:
        return DEFAULT_TIMEOUT_SECONDS
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        shown = f"{value:g}" if number else repr(value)
        warnings.append(
            f"{where}.timeout: {shown} is not a positive number of seconds; the "
            f"hook runs with the default {DEFAULT_TIMEOUT_SECONDS:g} s"
        )
        return DEFAULT_TIMEOUT_SECONDS
    return float(value)


def _unknown_keys(
    entry: Mapping[str, Any], known: frozenset[str], where: str, warnings: list[str]
) -> None:
    for key in sorted(set(entry) - known, key=str):
        warnings.append(f"{where}.{key}: not a key Forge reads; ignored")


def all_groups(files: Sequence[HookFile]) -> tuple[MatcherGroup, ...]:
    """Every group of `files`, in config order."""
    return tuple(group for hook_file in files for group in hook_file.groups)
