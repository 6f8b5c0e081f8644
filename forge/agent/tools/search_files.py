"""`search_files`: a regular-expression search over workspace files, like a small grep.

Patterns run on RE2 (google-re2), whose matching time is linear in the text: no pattern can
hang Forge, where Python's backtracking `re` takes exponential time on `^(a+)+$` against a
line of `a`s and a `!` (docs/adr/0020-linear-time-search.md). RE2's syntax is Python's
without backreferences and look-around.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.ignore import IgnoreRules, WorkspaceEntry, gitignore_spec, walk
from forge.agent.tools.text_files import not_regular_error, read_regular_bytes
from forge.agent.tools.threads import run_in_daemon_thread
from forge.agent.tools.workspace import (
    display_path,
    is_inside_workspace,
    resolve_in_workspace,
    workspace_root,
)
from forge.llm.protocols import ToolSpec

MAX_MATCHES = 200
"""Matching lines reported before the rest is summarized as a count."""
MAX_LINE_CHARACTERS = 300
"""A longer matching line is shortened in the report."""
MAX_FILE_BYTES = 5_000_000
"""Larger files are skipped (they are rarely source and slow to scan)."""
BINARY_SNIFF_BYTES = 8192
MAX_PATTERN_MEMORY = 64 << 20
"""RE2's memory budget for one compiled pattern; a pattern needing more is refused."""


class SearchFilesArgs(ToolArguments):
    """`search_files`'s arguments."""

    regex: str = Field(description="The regular expression to find.")
    path: str | None = Field(
        default=None,
        description="Directory or file to search, relative to the workspace (default '.').",
    )
    include: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. '*.py' or "
        "'src/**/*.ts' (gitignore-style).",
    )


class SearchFilesTool(ModelTool[SearchFilesArgs]):
    """Finds lines matching a regular expression (RE2, linear time), respecting .gitignore."""

    spec = ToolSpec(
        name="search_files",
        description=(
            "Search workspace files for a regular expression (RE2 syntax: Python's, without "
            "backreferences or look-around), reporting 'path:line: text' for each matching "
            "line. Ignored files, .git, binary files and files over 5 MB are skipped."
        ),
        parameters=tool_schema(SearchFilesArgs),
    )
    arguments_model = SearchFilesArgs

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "search_files: /def main/ in src (*.py)"."""
        line = f"search_files: /{arguments.get('regex', '')}/ in {arguments.get('path') or '.'}"
        include = arguments.get("include")
        return f"{line} ({include})" if include else line

    async def run(self, args: SearchFilesArgs, context: ToolContext) -> ToolResult:
        """The matching lines, capped at `MAX_MATCHES`."""
        pattern = compile_pattern(args.regex)
        target = resolve_in_workspace(context.workspace, args.path or ".")
        shown = display_path(context.workspace, target)
        include = args.include or None
        root = workspace_root(context.workspace)
        content = await run_in_daemon_thread(_search, root, target, shown, pattern, include)
        return ToolResult(content=content, metadata={"path": shown})


def compile_pattern(regex: str) -> Any:
    """`regex` compiled by RE2; `ToolError` naming what RE2 cannot take (e.g. "\\1")."""
    import re2  # on first use: not on the start-up path (docs/adr/0042)

    options = re2.Options()
    options.log_errors = False  # RE2 would print to stderr, through the TUI
    options.max_mem = MAX_PATTERN_MEMORY
    try:
        return re2.compile(regex, options=options)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", errors="replace")
        raise ToolError(
            f"invalid regex {regex!r}: {reason} (RE2 syntax: no backreferences or look-around)"
        ) from None


def _search(root: Path, target: Path, shown: str, pattern: Any, include: str | None) -> str:
    try:
        mode = os.stat(target).st_mode
    except OSError:
        raise ToolError(f"path '{shown}' does not exist") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise not_regular_error(shown, mode)
    included = gitignore_spec([include]) if include else None
    matches: list[str] = []
    extra = 0
    for entry in _candidate_files(root, target):
        relative = entry.relative.as_posix()
        if included is not None and not included.match_file(relative):
            continue
        for number, line in _matching_lines(entry.path, pattern):
            if len(matches) < MAX_MATCHES:
                matches.append(f"{relative}:{number}: {_shorten(line)}")
            else:
                extra += 1
    if not matches:
        scope = f" matching {include!r}" if include else ""
        return f"no matches for /{pattern.pattern}/ in {shown}{scope}"
    if extra:
        matches.append(f"... {extra} more matches not shown; narrow the regex, path or include")
    return "\n".join(matches)


def _candidate_files(root: Path, target: Path) -> list[WorkspaceEntry]:
    relative = PurePosixPath(target.relative_to(root).as_posix())
    if target.is_file():
        return [WorkspaceEntry(path=target, relative=relative, is_directory=False)]
    # As with list_files: naming an ignored directory means "search it anyway".
    respect = target == root or not IgnoreRules(root).is_ignored(relative, is_directory=True)
    return [
        entry
        for entry in walk(root, target, recursive=True, respect_ignores=respect)
        if not entry.is_directory
        # A symlink to a file outside the workspace must not be read through.
        and is_inside_workspace(root, entry.path)
    ]


def _matching_lines(path: Path, pattern: Any) -> list[tuple[int, str]]:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return []
        data = read_regular_bytes(path, path.name)
    except (OSError, ToolError):
        return []
    if data is None:
        return []
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return []
    text = data.decode("utf-8", errors="replace")
    return [
        (number, line.rstrip("\r"))
        for number, line in enumerate(text.split("\n"), start=1)
        if pattern.search(line)
    ]


def _shorten(line: str) -> str:
    stripped = line.strip()
    if len(stripped) <= MAX_LINE_CHARACTERS:
        return stripped
    return stripped[:MAX_LINE_CHARACTERS] + " …"
