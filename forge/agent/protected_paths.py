"""Forge's own configuration inside a workspace, which the model may not change unasked.

A write there changes what Forge runs: `.forge/` (MCP servers, custom commands), `.agents/`
and `.claude/` (commands, agents, skills, hooks, servers other agents share), `AGENTS.md`
(instructions every turn reads), and the user's config directory and Forge's state directory
(the trust store) when the workspace contains them. A model's `write_file` or `apply_diff`
to any of them asks the user in every mode but auto, even when the tool is auto-approved or
allow-listed (docs/adr/0034); `forge run` refuses it unless in auto mode.

Both the path as the model wrote it and its real path (symlinks resolved) are checked, so a
symlink cannot hide a protected target, and the names compare case-insensitively (macOS and
Windows filesystems fold case).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from forge.config.paths import config_path, state_dir

PROTECTED_DIRECTORIES = (".forge", ".agents", ".claude")
"""Folders, at any depth of the workspace, whose files configure Forge or other agents."""
PROTECTED_FILES = ("AGENTS.md",)
"""File names, at any depth, that instruct the agent."""
PROTECTED_REASON = "changes what Forge runs"
"""Why such a write always asks, as the approval dialog and `forge run` say it."""
EDIT_TOOLS = frozenset({"write_file", "apply_diff"})
"""The model's file-writing tools (their `path` argument is checked)."""

_DIRECTORY_NAMES = frozenset(name.casefold() for name in PROTECTED_DIRECTORIES)
_FILE_NAMES = frozenset(name.casefold() for name in PROTECTED_FILES)


def user_protected_directories() -> list[Path]:
    """The user's Forge config directory (and `$FORGE_CONFIG`'s file) and the state
    directory, as real paths."""
    config = config_path()
    return [_real(config.parent), _real(config), _real(state_dir())]


def _real(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):
        return path.expanduser().absolute()


def _named_part(parts: Sequence[str]) -> str | None:
    """The protected name among `parts`, if any."""
    for index, part in enumerate(parts):
        folded = part.casefold()
        if folded in _DIRECTORY_NAMES and index < len(parts) - 1:
            return part + "/"
        if folded in _DIRECTORY_NAMES or folded in _FILE_NAMES:
            return part
    return None


def protected_reason(
    workspace: Path, path: str, user_directories: Sequence[Path] | None = None
) -> str | None:
    """Why writing `path` (as a tool got it, relative to `workspace` unless absolute) must be
    approved by the user, or None when it is an ordinary file."""
    if not path or "\x00" in path:
        return None
    written = PurePosixPath(path.replace("\\", "/"))
    name = _named_part(written.parts)
    root = _real(workspace)
    real = _real(root / path)
    if name is None and real.is_relative_to(root):
        name = _named_part(real.relative_to(root).parts)
    if name is not None:
        # `AGENTS.md` is itself the configuration; `.forge/x.yaml` is inside `.forge`.
        where = "is" if PurePosixPath(path).name == name.rstrip("/") else f"is in {name},"
        return f"{path} {where} part of Forge's configuration: writing it {PROTECTED_REASON}"
    if user_directories is None:
        user_directories = user_protected_directories()
    for directory in user_directories:
        if real == directory or real.is_relative_to(directory):
            return (
                f"{path} is in your Forge configuration ({directory}): writing it "
                f"{PROTECTED_REASON}"
            )
    return None


def protected_write(tool_name: str, arguments: object, workspace: Path) -> str | None:
    """The `protected_reason` of a file-writing tool call's `path`, else None."""
    if tool_name not in EDIT_TOOLS or not isinstance(arguments, dict):
        return None
    target = arguments.get("path")
    return protected_reason(workspace, target) if isinstance(target, str) else None
