"""`list_files`: what a workspace directory holds, skipping `.git` and ignored files."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import Boolean, ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.ignore import IgnoreRules, walk
from forge.agent.tools.workspace import ReadableRoots, resolve_readable
from forge.llm.protocols import ToolSpec

MAX_ENTRIES = 500
"""Entries listed before the rest is summarized as "... N more"."""


class ListFilesArgs(ToolArguments):
    """`list_files`'s arguments."""

    path: str | None = Field(
        default=None, description="Directory to list, relative to the workspace (default '.')."
    )
    recursive: Boolean | None = Field(
        default=None, description="List everything below the directory too (default false)."
    )


class ListFilesTool(ModelTool[ListFilesArgs]):
    """Lists a directory (optionally recursively), respecting .gitignore."""

    spec = ToolSpec(
        name="list_files",
        description=(
            "List files and directories (directories end with '/'), relative to the workspace. "
            "Entries ignored by .gitignore and the .git directory are skipped."
        ),
        parameters=tool_schema(ListFilesArgs),
    )
    arguments_model = ListFilesArgs

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "list_files: src (recursive)"."""
        suffix = " (recursive)" if arguments.get("recursive") is True else ""
        return f"list_files: {arguments.get('path') or '.'}{suffix}"

    def __init__(self, readable: ReadableRoots | None = None) -> None:
        """`readable`: folders outside the workspace it may list too (loaded skills')."""
        self.readable = readable

    async def run(self, args: ListFilesArgs, context: ToolContext) -> ToolResult:
        """The entries, one per line, capped at `MAX_ENTRIES`."""
        directory, root, shown = resolve_readable(
            context.workspace, args.path or ".", self.readable
        )
        recursive = bool(args.recursive)
        content = await asyncio.to_thread(_list, root, directory, shown, recursive)
        return ToolResult(content=content, metadata={"path": shown})


def _list(root: Path, directory: Path, shown: str, recursive: bool) -> str:
    if not directory.exists():
        raise ToolError(f"directory '{shown}' does not exist")
    if not directory.is_dir():
        raise ToolError(f"'{shown}' is a file, not a directory; use read_file to read it")
    entries: list[str] = []
    more = 0
    for entry in walk(
        root, directory, recursive=recursive, respect_ignores=_respect(root, directory)
    ):
        if len(entries) < MAX_ENTRIES:
            entries.append(entry.relative.as_posix() + ("/" if entry.is_directory else ""))
        else:
            more += 1
    if not entries:
        return f"{shown} is empty (or everything in it is ignored)"
    if more:
        entries.append(f"... {more} more entries not shown; list a subdirectory to see them")
    return "\n".join(entries)


def _respect(root: Path, directory: Path) -> bool:
    """Ignore rules apply unless the directory asked for is itself ignored: asking for it by
    name means the caller wants to see inside."""
    if directory == root:
        return True
    relative = PurePosixPath(directory.relative_to(root).as_posix())
    return not IgnoreRules(root).is_ignored(relative, is_directory=True)
