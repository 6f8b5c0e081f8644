"""`apply_diff`: exact search/replace edits to one file, all applied or none."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from forge.agent.tools.arguments import ModelTool, ToolArguments, description_first, tool_schema
from forge.agent.tools.base import ToolContext, ToolError, ToolResult
from forge.agent.tools.diffs import diff_stats, unified_diff
from forge.agent.tools.read_ledger import FileReadLedger
from forge.agent.tools.text_files import read_text_for_edit, write_text
from forge.agent.tools.workspace import display_path, resolve_in_workspace
from forge.llm.protocols import ToolSpec


@dataclass(frozen=True, slots=True)
class PlannedEdit:
    """An edit checked against the file as it is now, not yet written."""

    shown_path: str
    old: str
    new: str
    diff: str


class DiffBlock(ToolArguments):
    """One search/replace edit of `apply_diff`."""

    search: str = Field(description="Exact text to find.")
    replace: str = Field(description="Text to put there.")


class ApplyDiffArgs(ToolArguments):
    """`apply_diff`'s arguments."""

    path: str = Field(description="File path, relative to the workspace.")
    blocks: list[DiffBlock] = Field(
        description="The edits, applied in order.", json_schema_extra=description_first
    )


class ApplyDiffTool(ModelTool[ApplyDiffArgs]):
    """Applies search/replace blocks; each search must match the file exactly once."""

    spec = ToolSpec(
        name="apply_diff",
        description=(
            "Edit an existing file with search/replace blocks. Each block's `search` text must "
            "occur exactly once in the file (after earlier blocks are applied), matching "
            "whitespace and indentation exactly, without read_file's line-number prefixes. "
            "Blocks apply in order; if any block fails, nothing is written. Include enough "
            "surrounding lines to make each search unique."
        ),
        parameters=tool_schema(ApplyDiffArgs),
    )
    arguments_model = ApplyDiffArgs
    mutates = True

    def __init__(self, ledger: FileReadLedger | None = None) -> None:
        """`ledger` records what the model wrote (shared with `read_file` and `write_file`)."""
        self.ledger = ledger if ledger is not None else FileReadLedger()

    def describe(self, arguments: Mapping[str, Any]) -> str:
        """E.g. "apply_diff: src/app.py (2 blocks)"."""
        blocks = arguments.get("blocks")
        count = len(blocks) if isinstance(blocks, list) else 0
        noun = "block" if count == 1 else "blocks"
        return f"apply_diff: {arguments.get('path', '?')} ({count} {noun})"

    def preview(self, arguments: Mapping[str, Any], context: ToolContext) -> str:
        """The diff the edit would make, or why it would fail; nothing is written."""
        try:
            plan = plan_edit(context, arguments.get("path"), arguments.get("blocks"))
        except ToolError as error:
            return f"cannot preview: {error}"
        return plan.diff or "(no change)"

    def refusal(self, arguments: Mapping[str, Any], context: ToolContext) -> str | None:
        """Why the edit cannot apply (unread file, block not found), before asking the user."""
        try:
            plan_edit(context, arguments.get("path"), arguments.get("blocks"))
        except ToolError as error:
            return str(error)
        except Exception:  # never raises: running the call reports it
            return None
        return None

    async def run(self, args: ApplyDiffArgs, context: ToolContext) -> ToolResult:
        """Apply every block or none; the result's metadata holds the diff and the path."""
        blocks = [block.model_dump() for block in args.blocks]
        plan = plan_edit(context, args.path, blocks)
        metadata = {"path": plan.shown_path, "diff": plan.diff}
        count = len(blocks)
        noun = "block" if count == 1 else "blocks"
        if not plan.diff:
            return ToolResult(
                content=f"applied {count} {noun} to {plan.shown_path}; the content is unchanged",
                metadata=metadata,
            )
        path = resolve_in_workspace(context.workspace, args.path)
        if context.changes is not None:
            context.changes.before_change(path)
        try:
            write_text(path, plan.shown_path, plan.new)
        finally:  # even a failed write may have changed the file
            if context.changes is not None:
                context.changes.after_change(path)
        self.ledger.record(path, plan.new.encode("utf-8"))
        added, removed = diff_stats(plan.diff)
        return ToolResult(
            content=f"applied {count} {noun} to {plan.shown_path} (+{added} -{removed})",
            metadata=metadata,
        )


def plan_edit(context: ToolContext, path_argument: Any, blocks: Any) -> PlannedEdit:
    """Check every block against the file and compute the result, without writing.

    Raises `ToolError` listing every failing block by number ("block 2: search text matched 3
    times ...") and stating that nothing was changed.
    """
    if not isinstance(path_argument, str):
        raise ToolError("missing required argument 'path'")
    if not isinstance(blocks, Sequence) or isinstance(blocks, str) or not blocks:
        raise ToolError("'blocks' must be a non-empty list of {search, replace} objects")
    path = resolve_in_workspace(context.workspace, path_argument)
    shown = display_path(context.workspace, path)
    old = read_text_for_edit(path, shown, strict=True)
    if old is None:
        raise ToolError(f"file '{shown}' does not exist; create it with write_file")
    # Models write "\n" even when the file uses CRLF; meet the file's convention.
    crlf = "\r\n" in old
    text = old
    problems: list[str] = []
    for number, block in enumerate(blocks, start=1):
        if not isinstance(block, Mapping):
            problems.append(f"block {number}: must be an object with 'search' and 'replace'")
            continue
        search, replace = block.get("search"), block.get("replace")
        if not isinstance(search, str) or not isinstance(replace, str):
            problems.append(f"block {number}: 'search' and 'replace' must both be strings")
            continue
        if crlf and "\r\n" not in search:
            search, replace = _to_crlf(search), _to_crlf(replace)
        if not search:
            problems.append(f"block {number}: search text is empty")
            continue
        count = _occurrences(text, search)
        if count == 1:
            text = text.replace(search, replace, 1)
        else:
            problems.append(f"block {number}: {_mismatch(text, search, count)}")
    if problems:
        details = "\n".join(problems)
        raise ToolError(f"no changes were made to {shown}:\n{details}")
    return PlannedEdit(shown_path=shown, old=old, new=text, diff=unified_diff(old, text, shown))


def _occurrences(text: str, search: str) -> int:
    """How many places `search` starts in `text`, overlapping ones included: with repeated
    lines, `str.count` sees one match where the edit's place is really ambiguous."""
    count = 0
    position = text.find(search)
    while position != -1:
        count += 1
        position = text.find(search, position + 1)
    return count


def _mismatch(text: str, search: str, count: int) -> str:
    if count > 1:
        return (
            f"search text matched {count} times; it must match exactly once "
            "(add surrounding lines to make it unique)"
        )
    stripped = _squeeze(search)
    if stripped and stripped in _squeeze(text):
        return (
            "search text matched 0 times; it does occur if whitespace is ignored, so check "
            "indentation and trailing spaces (whitespace must match exactly)"
        )
    return "search text matched 0 times; read the file again for its exact current text"


def _squeeze(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines())


def _to_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")
