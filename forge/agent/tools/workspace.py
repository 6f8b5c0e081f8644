"""Keeping file tools inside the workspace (invariant 6).

Every path a tool touches goes through `resolve_in_workspace`, which resolves it the way the
operating system would — `..` and every symlink along the way, including a symlinked parent of
a file that does not exist yet, and a dangling symlink's target — and refuses the result unless
it lies inside the workspace's own real path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from forge.agent.tools.base import ToolError


def workspace_root(workspace: Path) -> Path:
    """The workspace's real path (symlinks resolved); `ToolError` if it is not a directory."""
    try:
        root = workspace.resolve(strict=True)
    except (OSError, RuntimeError) as error:
        raise ToolError(f"workspace '{workspace}' is not accessible: {error}") from None
    if not root.is_dir():
        raise ToolError(f"workspace '{workspace}' is not a directory")
    return root


def resolve_in_workspace(workspace: Path, path: str) -> Path:
    """The real path `path` names, relative to `workspace` unless absolute.

    Raises `ToolError` ("path '../x' is outside the workspace") if the real path — after `..`
    and all symlinks — is not the workspace or inside it, and for empty paths, NUL bytes and
    symlink loops. The path need not exist.
    """
    if not path:
        raise ToolError("path is empty; use '.' for the workspace itself")
    if "\x00" in path:
        raise ToolError("path contains a NUL byte")
    root = workspace_root(workspace)
    candidate = Path(path)
    joined = candidate if candidate.is_absolute() else root / candidate
    try:
        resolved = joined.resolve(strict=False)
    except RuntimeError:
        raise ToolError(f"path '{path}' is a symlink loop") from None
    except OSError as error:
        raise ToolError(f"path '{path}' cannot be resolved: {error.strerror}") from None
    if not resolved.is_relative_to(root):
        raise ToolError(f"path '{path}' is outside the workspace")
    return resolved


def display_path(workspace: Path, resolved: Path) -> str:
    """`resolved` relative to the workspace, POSIX style ('.' for the workspace itself)."""
    root = workspace_root(workspace)
    relative = resolved.relative_to(root).as_posix()
    return relative or "."


def is_inside_workspace(root: Path, path: Path) -> bool:
    """Whether `path`'s real path lies inside `root` (an already resolved workspace root)."""
    try:
        return path.resolve(strict=False).is_relative_to(root)
    except (OSError, RuntimeError):
        return False


ReadableRoots = Callable[[], Sequence[Path]]
"""Folders outside the workspace the read-only tools may read now (loaded skills' folders,
docs/adr/0046)."""


def resolve_readable(
    workspace: Path, path: str, readable: ReadableRoots | None
) -> tuple[Path, Path, str]:
    """For a read-only tool: the real path `path` names, the root it lies in, and how to show
    it. Inside the workspace as `resolve_in_workspace`; else, for an absolute path, inside one
    of the `readable` folders (shown absolute). `ToolError` otherwise."""
    try:
        resolved = resolve_in_workspace(workspace, path)
    except ToolError:
        found = _in_readable(path, readable() if readable is not None else ())
        if found is None:
            raise
        return found
    return resolved, workspace_root(workspace), display_path(workspace, resolved)


def _in_readable(path: str, roots: Sequence[Path]) -> tuple[Path, Path, str] | None:
    candidate = Path(path).expanduser() if path and "\x00" not in path else None
    if candidate is None or not candidate.is_absolute() or not roots:
        return None
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError):
        return None
    for root in roots:
        try:
            real = root.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if resolved.is_relative_to(real):
            return resolved, real, str(resolved)
    return None
