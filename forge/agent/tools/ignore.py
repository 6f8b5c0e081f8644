"""Which workspace files the listing and search tools skip: `.git`, and what `.gitignore` says.

Rules come from every `.gitignore` between the workspace root and the file (deeper files win,
as in git) plus the root's `.git/info/exclude`, matched with pathspec's gitignore semantics.
Ignore files above the workspace are not read: the workspace is the agent's whole world.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported when a spec is first made: pathspec (and its RE2 backend) costs ~10 ms, off
    # the start-up path (docs/adr/0042).
    from pathspec import GitIgnoreSpec

ALWAYS_SKIPPED = frozenset({".git"})
"""Directory names never listed or searched, whatever the ignore files say."""


class IgnoreRules:
    """Answers "is this workspace path ignored?" using the gitignore files of the workspace."""

    def __init__(self, root: Path) -> None:
        """`root` is the workspace's real path."""
        self.root = root
        self._specs: dict[PurePosixPath, GitIgnoreSpec | None] = {}

    def is_ignored(self, relative: PurePosixPath, is_directory: bool) -> bool:
        """Whether the workspace-relative `relative` path is ignored (or inside `.git`)."""
        if any(part in ALWAYS_SKIPPED for part in relative.parts):
            return True
        # Deeper ignore files override shallower ones, so ask from the deepest directory up and
        # let the first file with an opinion (ignore or "!" re-include) decide.
        for directory in relative.parents:
            spec = self._spec_for(directory)
            if spec is None:
                continue
            inner = relative.relative_to(directory).as_posix()
            result = spec.check_file(inner + "/" if is_directory else inner)
            if result.include is not None:
                return bool(result.include)
        return False

    def _spec_for(self, directory: PurePosixPath) -> GitIgnoreSpec | None:
        if directory not in self._specs:
            lines: list[str] = []
            sources = [self.root / directory / ".gitignore"]
            if directory == PurePosixPath("."):
                sources.insert(0, self.root / ".git" / "info" / "exclude")
            for source in sources:
                try:
                    lines.extend(source.read_text(encoding="utf-8", errors="replace").splitlines())
                except OSError:
                    continue
            self._specs[directory] = gitignore_spec(lines) if lines else None
        return self._specs[directory]


def gitignore_spec(lines: list[str]) -> GitIgnoreSpec:
    """`lines` as gitignore patterns."""
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)


@dataclass(frozen=True, slots=True)
class WorkspaceEntry:
    """One file or directory found by `walk`."""

    path: Path
    relative: PurePosixPath
    is_directory: bool


def walk(
    root: Path, start: Path, *, recursive: bool, respect_ignores: bool = True
) -> Iterator[WorkspaceEntry]:
    """Entries under `start` (a directory inside `root`) in pre-order, sorted by name.

    Ignored entries are skipped and ignored directories are not entered. Symlinked
    directories are listed but never followed, so a walk cannot leave the workspace.
    """
    rules = IgnoreRules(root)
    stack: list[Iterator[os.DirEntry[str]]] = [_sorted_children(start)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        if child.name in ALWAYS_SKIPPED:
            continue
        path = Path(child.path)
        relative = PurePosixPath(path.relative_to(root).as_posix())
        is_directory = child.is_dir(follow_symlinks=False)
        if respect_ignores and rules.is_ignored(relative, is_directory):
            continue
        yield WorkspaceEntry(path=path, relative=relative, is_directory=is_directory)
        if recursive and is_directory:
            stack.append(_sorted_children(path))


def _sorted_children(directory: Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as scan:
            children = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        # An unreadable directory is skipped rather than ending the whole walk.
        return iter(())
    return iter(children)
