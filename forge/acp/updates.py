"""Forge's events and messages as ACP session updates: pure functions, no I/O.

Tool calls: `tool_call` (pending) when the model's message names them, `tool_call_update`
in_progress when one runs and completed/failed with its result when it ends; an edit's diff
becomes ACP `diff` content (`forge.acp.file_diffs`: one per file, new files from empty old
text, placed by `locations` lines). The plan (`update_plan`) becomes an ACP `plan` update
where it happened, not a tool card.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentPlanUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntryStatus,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolKind,
)

from forge.acp.file_diffs import file_diff
from forge.config.secrets import redact
from forge.context.plan import Plan, PlanStatus, plan_from_meta
from forge.llm.messages import ToolCall

TOOL_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_files": "read",
    "recall": "read",
    "search_files": "search",
    "write_file": "edit",
    "apply_diff": "edit",
    "execute_command": "execute",
    "update_plan": "think",
}
"""ACP's kind of each of Forge's tools (others, MCP tools included, are "other")."""

MAX_RESULT_CHARS = 20_000
"""A tool result is shown to the editor up to this many characters (the model got it all)."""

MAX_LIVE_OUTPUT = 4_000
"""Characters of a running command's output shown in its card while it runs."""

_PLAN_STATUS: dict[PlanStatus, PlanEntryStatus] = {
    PlanStatus.PENDING: "pending",
    PlanStatus.IN_PROGRESS: "in_progress",
    PlanStatus.DONE: "completed",
}

ToolContent = ContentToolCallContent | FileEditToolCallContent


def arguments_of(call: ToolCall) -> Any:
    """The call's arguments as JSON (its raw text when it is not JSON), keys masked."""
    text = redact(call.arguments or "{}")
    try:
        return json.loads(text)
    except ValueError:
        return text


def tool_call_started(call: ToolCall, title: str, workspace: Path) -> ToolCallStart:
    """The `tool_call` update for a call the model just made (not run yet)."""
    return start_tool_call(
        call.id,
        title,
        kind=TOOL_KINDS.get(call.name, "other"),
        status="pending",
        locations=locations_of(call, workspace),
        raw_input=arguments_of(call),
    )


def tool_call_running(call_id: str) -> ToolCallProgress:
    """The call has been approved (or needed no approval) and runs now."""
    return update_tool_call(call_id, status="in_progress")


def tool_call_finished(
    call: ToolCall, result: str, is_error: bool, metadata: dict[str, Any], workspace: Path
) -> ToolCallProgress:
    """The call's end: completed or failed, its diff (edits: one per file, placed by the
    `locations` lines, `forge.acp.file_diffs`) and its result text."""
    content: list[ToolContent] = []
    locations: list[ToolCallLocation] | None = None
    diff = metadata.get("diff")
    path = metadata.get("path")
    if isinstance(diff, str) and diff and isinstance(path, str) and not is_error:
        edit = file_diff(workspace / path, diff, edited=True)
        content.extend(edit.contents)
        locations = edit.locations
    shown = result if len(result) <= MAX_RESULT_CHARS else result[:MAX_RESULT_CHARS] + "\n…"
    if shown:
        content.append(tool_content(text_block(shown)))
    return update_tool_call(
        call.id,
        status="failed" if is_error else "completed",
        content=content,
        locations=locations,
        raw_output={"result": shown, "is_error": is_error},
    )


def tool_call_output(call_id: str, output: str) -> ToolCallProgress:
    """A running call's output so far (a command's), its last `MAX_LIVE_OUTPUT` characters."""
    shown = output if len(output) <= MAX_LIVE_OUTPUT else "…" + output[-MAX_LIVE_OUTPUT:]
    return update_tool_call(call_id, content=[tool_content(text_block(shown))])


def tool_call_cancelled(call_id: str, reason: str) -> ToolCallProgress:
    """A call the turn's end left unrun or cut off (Esc, `session/cancel`)."""
    return update_tool_call(call_id, status="failed", content=[tool_content(text_block(reason))])


def locations_of(call: ToolCall, workspace: Path) -> list[ToolCallLocation] | None:
    """The file a file tool's call names (so the editor can follow it)."""
    arguments = arguments_of(call)
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str) or not path:
        return None
    return [ToolCallLocation(path=str(workspace / path))]


def markdown_lines(text: str) -> str:
    """Plain text lines (a command's answer, a list of notes) as Markdown that keeps them
    apart. Editors render an agent message as Markdown (Toad, Zed), where a single newline is
    a soft break, shown as a space, so the lines ran together: each newline between two
    lines becomes a hard break (two spaces before it); a blank line stays a paragraph break."""
    lines = text.split("\n")
    return "\n".join(
        line + "  "
        if line.strip() and index + 1 < len(lines) and lines[index + 1].strip()
        else line
        for index, line in enumerate(lines)
    )


def plan_update(plan: Plan) -> AgentPlanUpdate:
    """The plan as ACP plan entries (done is ACP's "completed")."""
    return update_plan(plan_entry(item.step, status=_PLAN_STATUS[item.status]) for item in plan)


def plan_of_result(name: str, metadata: dict[str, Any]) -> Plan | None:
    """The plan an `update_plan` call set, None for any other call."""
    if name != "update_plan":
        return None
    return plan_from_meta(metadata.get("plan"))
