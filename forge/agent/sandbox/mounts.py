"""What a confined command may write, read, or not see: bubblewrap's mount arguments.

The whole file system is mounted read-only; the workspace and the session's private /tmp are
mounted writable over it; inside the workspace, what changes what Forge (or git) runs next is
mounted read-only again (`.forge/`, `.agents/`, `.claude/`, `AGENTS.md`, `.git/hooks`,
`.git/config`); then each secret path is hidden (an empty read-only folder, or /dev/null for
a file), and the folders of loaded skills inside a hidden folder are mounted back read-only.
The order is bubblewrap's: a later mount covers an earlier one.

A protected name that does not exist yet would be creatable, so bubblewrap mounts an empty
read-only placeholder there; it creates the mount point in the workspace, which
`Placeholders` removes again once no command of the session uses it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

PROTECTED_FOLDERS = (".forge", ".agents", ".claude")
"""Workspace folders whose files Forge runs or reads as instructions (docs/adr/0034)."""
PROTECTED_FILES = ("AGENTS.md",)
GIT_PROTECTED = ("hooks", "config")
"""Inside the git directory: what `git` runs (hooks, `core.hooksPath`, aliases, filters)."""
SECRET_HOME_PATHS = (
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".docker/config.json",
    ".kube",
    ".config/gcloud",
    ".azure",
    ".pypirc",
    ".npmrc",
)
"""Paths under the home folder a confined command cannot read (besides Forge's own)."""


@dataclass(frozen=True)
class MountPlan:
    """bubblewrap's mount arguments for one command, and the placeholders they create."""

    arguments: tuple[str, ...]
    placeholders: tuple[Path, ...]


def secret_paths(home: Path, forge_paths: Iterable[Path], deny_read: Iterable[str]) -> list[Path]:
    """Every path a confined command must not read: the home folder's secrets, Forge's own
    files and folders, and `tools.sandbox.deny_read` (`~` expanded)."""
    paths = [home / relative for relative in SECRET_HOME_PATHS]
    paths.extend(forge_paths)
    for entry in deny_read:
        if entry.strip():
            paths.append(Path(entry.strip()).expanduser())
    return paths


def plan_mounts(
    workspace: Path,
    session_tmp: Path | None,
    hidden: Sequence[Path],
    readable: Sequence[Path],
    *,
    placeholders_allowed: bool = True,
) -> MountPlan:
    """The mounts for a command in `workspace` (a real path), with `session_tmp` as /tmp (None:
    an empty one), `hidden` unreadable and `readable` (skill folders) readable again inside
    them. Without `placeholders_allowed` (a long-lived MCP server), a missing protected name
    gets no placeholder, so such a server could create it (docs/adr/0053)."""
    arguments: list[str] = [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        *(("--bind", str(session_tmp), "/tmp") if session_tmp else ("--tmpfs", "/tmp")),
        "--bind", str(workspace), str(workspace),
    ]  # fmt: skip
    placeholders: list[Path] = []
    for name in PROTECTED_FOLDERS:
        _protect(workspace / name, True, arguments, placeholders, placeholders_allowed)
    for name in PROTECTED_FILES:
        _protect(workspace / name, False, arguments, placeholders, placeholders_allowed)
    for git_directory in _git_directories(workspace):
        if git_directory.is_relative_to(workspace):
            continue
        arguments += ["--bind", str(git_directory), str(git_directory)]
    for git_directory in _git_directories(workspace):
        for name in GIT_PROTECTED:
            path = git_directory / name
            if path.exists():
                arguments += ["--ro-bind", str(path), str(path)]
        worktree_config = git_directory / "config.worktree"
        if worktree_config.exists():
            arguments += ["--ro-bind", str(worktree_config), str(worktree_config)]
    hidden_real: list[Path] = []
    for path in hidden:
        real = _existing_real_path(path)
        if real is None or real == Path("/") or workspace.is_relative_to(real):
            continue
        hidden_real.append(real)
        if real.is_dir():
            arguments += ["--tmpfs", str(real)]
        else:
            arguments += ["--ro-bind", "/dev/null", str(real)]
    for path in readable:
        real = _existing_real_path(path)
        if real is not None and any(real.is_relative_to(secret) for secret in hidden_real):
            arguments += ["--ro-bind", str(real), str(real)]
    for real in hidden_real:  # read-only once the skills' mount points are made in them
        if real.is_dir():
            arguments += ["--remount-ro", str(real)]
    return MountPlan(tuple(arguments), tuple(placeholders))


def _protect(
    path: Path,
    folder: bool,
    arguments: list[str],
    placeholders: list[Path],
    placeholders_allowed: bool = True,
) -> None:
    if path.exists():
        # Through a symlink, the target (if it is inside the workspace) is what Forge reads.
        real = str(path.resolve())
        arguments += ["--ro-bind", real, real]
        return
    if path.is_symlink() or not placeholders_allowed:
        return  # dangling: its target would be created outside the workspace, read-only there
    placeholders.append(path)
    if folder:
        arguments += ["--perms", "0555", "--tmpfs", str(path), "--remount-ro", str(path)]
    else:
        arguments += ["--ro-bind", "/dev/null", str(path)]


def _git_directories(workspace: Path) -> list[Path]:
    """The workspace's git directory and, for a worktree, the repository's common one."""
    dot_git = workspace / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [dot_git]
    if not dot_git.is_file():
        return []
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return []
    if not line.startswith("gitdir:"):
        return []
    git_directory = (workspace / line.removeprefix("gitdir:").strip()).resolve()
    directories = [git_directory] if git_directory.is_dir() else []
    with contextlib.suppress(OSError):
        common = (git_directory / "commondir").read_text(encoding="utf-8").strip()
        common_directory = (git_directory / common).resolve()
        if common_directory.is_dir() and common_directory not in directories:
            directories.append(common_directory)
    return directories


def _existing_real_path(path: Path) -> Path | None:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


class Placeholders:
    """Mount points bubblewrap created for missing protected names, removed once unused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[Path, int] = {}

    def acquire(self, paths: Iterable[Path]) -> None:
        """Commands about to run with these placeholders."""
        with self._lock:
            for path in paths:
                self._users[path] = self._users.get(path, 0) + 1

    def release(self, paths: Iterable[Path]) -> None:
        """Those commands ended: remove each placeholder no command uses any more, if it is
        still an empty folder or file (never anything someone wrote meanwhile)."""
        with self._lock:
            for path in paths:
                count = self._users.get(path, 0) - 1
                if count > 0:
                    self._users[path] = count
                    continue
                self._users.pop(path, None)
                _remove_if_empty(path)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_symlink():
            return
        if path.is_dir():
            path.rmdir()
        elif path.is_file() and path.stat().st_size == 0:
            path.unlink()
