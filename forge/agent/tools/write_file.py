"""`write_file`: create or replace a whole file in the workspace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.diffs import diff_stats, unified_diff
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.tools.text_files import read_regular_bytes, write_text
from forge.agent.tools.workspace import display_path, resolve_in_workspace
from forge.llm.protocols import ToolSpec


class WriteFileArgs(ToolArguments):
    """`write_file`'s arguments."""

    path: str = Field(description="File path, relative to the workspace.")
    content: str = Field(description="The complete new file content.")


class WriteFileTool(ModelTool[WriteFileArgs]):
    """Writes a file's whole content, creating missing parent directories.

    An existing file is replaced only if the model has read it (or written it) this session
    and it has not changed since: otherwise a `ToolError` asks the model to read it again.
    """

    spec = ToolSpec(
        name="write_file",
        description=(
            "Create a file or replace its whole content. Parent directories are created. "
            "An existing file must have been read with read_file first (and not changed "
            "since). To change part of an existing file prefer apply_diff."
        ),
        parameters=tool_schema(WriteFileArgs),
    )
    arguments_model = WriteFileArgs
    mutates = True

    def __init__(self, ledger: FileReadLedger | None = None) -> None:
        """`ledger` holds what the model read this session (shared with `read_file`)."""
        self.ledger = ledger if ledger is not None else FileReadLedger()

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "write_file: src/app.py (12 lines)"."""
        content = arguments.get("content")
        size = f" ({_lines(len(content.splitlines()))})" if isinstance(content, str) else ""
        return f"write_file: {arguments.get('path', '?')}{size}"

    def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> str:
        """The diff the write would make, computed without writing."""
        try:
            path_argument, content = arguments["path"], arguments["content"]
            if not isinstance(path_argument, str) or not isinstance(content, str):
                return self.describe(arguments)
            diff, _, _ = self._plan(context, path_argument, content)
        except (ToolError, KeyError) as error:
            return f"cannot preview: {error}"
        return diff or "(no change)"

    def refusal(self, arguments: Mapping[str, Any], context: ToolContext) -> str | None:
        """The read rule's or the workspace's refusal, known before asking the user."""
        path_argument, content = arguments.get("path"), arguments.get("content")
        if not isinstance(path_argument, str) or not isinstance(content, str):
            return None  # validation reports it when the call runs
        try:
            self._plan(context, path_argument, content)
        except ToolError as error:
            return str(error)
        except Exception:  # never raises: running the call reports it
            return None
        return None

    async def run(self, args: WriteFileArgs, context: ToolContext) -> ToolResult:
        """Write the file; the result's metadata holds the diff and the path."""
        diff, shown, existed = self._plan(context, args.path, args.content)
        path = resolve_in_workspace(context.workspace, args.path)
        content = args.content
        metadata = {"path": shown, "diff": diff}
        if existed and not diff:
            self.ledger.record(path, content.encode("utf-8"))
            return ToolResult(
                content=f"{shown} already has this content; nothing changed", metadata=metadata
            )
        if context.changes is not None:
            context.changes.before_change(path)
        try:
            write_text(path, shown, content)
        finally:  # even a failed write may have changed the file
            if context.changes is not None:
                context.changes.after_change(path)
        self.ledger.record(path, content.encode("utf-8"))
        added, removed = diff_stats(diff)
        verb = "updated" if existed else "created"
        lines = len(content.splitlines())
        return ToolResult(
            content=f"{verb} {shown} ({_lines(lines)}; +{added} -{removed})", metadata=metadata
        )

    def _plan(
        self, context: ToolContext, path_argument: str, content: str
    ) -> tuple[str, str, bool]:
        """(diff, display path, whether the file existed) for writing `content` to the path;
        `ToolError` if an existing file was not read, or changed since it was."""
        path = resolve_in_workspace(context.workspace, path_argument)
        shown = display_path(context.workspace, path)
        data = read_regular_bytes(path, shown)
        self.ledger.check_current(path, shown, data)
        old = data.decode("utf-8", errors="replace") if data is not None else None
        diff = unified_diff(old or "", content, shown, existed=old is not None)
        return diff, shown, old is not None


def _lines(count: int) -> str:
    """ "1 line", "2 lines"."""
    return f"{count} line" if count == 1 else f"{count} lines"
