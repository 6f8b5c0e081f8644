"""Approvals as `session/request_permission`: Forge asks the editor exactly when its policy
asks (the permission mode decides before; see forge.agent.approvals), with three options —
allow once, allow always (this tool, this session), reject — and reads the answer back."""

from __future__ import annotations

from pathlib import Path

from acp import text_block, tool_content, update_tool_call
from acp.schema import (
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from forge.acp.file_diffs import file_diff
from forge.acp.updates import (
    TOOL_KINDS,
    ToolContent,
    arguments_of,
    locations_of,
)
from forge.agent.events import ApprovalDecision, ApprovalRequested, ApprovalVerdict
from forge.config.secrets import redact

ALLOW_ONCE = "allow_once"
ALLOW_ALWAYS = "allow_always"
REJECT = "reject"

EDITOR_CANCELLED = "the editor withdrew the question (the turn is being cancelled)"


def permission_options(event: ApprovalRequested) -> list[PermissionOption]:
    """What the editor offers. A write to Forge's own configuration gets no "always" (it
    asks every time in every mode but auto; docs/adr/0034)."""
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if not event.protected:
        options.append(
            PermissionOption(
                option_id=ALLOW_ALWAYS,
                name=f"Always allow {event.call.name} this session"
                + (f" for {event.agent}" if event.agent else ""),
                kind="allow_always",
            )
        )
    options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    return options


def permission_tool_call(event: ApprovalRequested, workspace: Path) -> ToolCallUpdate:
    """The call the question is about: its id (the editor already shows it), what it would
    do, and for an edit the diff it would make."""
    content: list[ToolContent] = []
    locations = locations_of(event.call, workspace)
    path = _path_argument(event)
    preview = redact(event.preview)
    if preview.startswith(("---", "@@")) and path:
        edit = file_diff(workspace / path, preview, edited=False)  # the file is as before
        content.extend(edit.contents)
        locations = edit.locations
    elif preview:
        content.append(tool_content(text_block(preview)))
    if event.protected:
        content.append(tool_content(text_block(event.protected)))
    if event.asked_by:  # a PreToolUse hook asked: which one, and why (docs/adr/0048)
        reason = event.ask_reason.strip() or "(no reason given)"
        content.append(
            tool_content(text_block(redact(f"A hook asks: {reason} — {event.asked_by}")))
        )
    update = update_tool_call(
        event.call.id,
        # A child's request (a `task` call's subagent) names the child (docs/adr/0045).
        title=redact(f"[{event.agent}] {event.summary}" if event.agent else event.summary),
        kind=TOOL_KINDS.get(event.call.name, "other"),
        status="pending",
        content=content or None,
        locations=locations,
    )
    return ToolCallUpdate.model_validate(update.model_dump(exclude={"session_update"}))


def decision_of(response: RequestPermissionResponse) -> ApprovalDecision:
    """The editor's answer as Forge's decision (a withdrawn question is a rejection)."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return ApprovalDecision(ApprovalVerdict.REJECT, EDITOR_CANCELLED)
    if outcome.option_id == ALLOW_ONCE:
        return ApprovalDecision(ApprovalVerdict.APPROVE_ONCE)
    if outcome.option_id == ALLOW_ALWAYS:
        return ApprovalDecision(ApprovalVerdict.APPROVE_ALWAYS)
    return ApprovalDecision(ApprovalVerdict.REJECT, "rejected in the editor")


def _path_argument(event: ApprovalRequested) -> str:
    arguments = arguments_of(event.call)
    path = arguments.get("path") if isinstance(arguments, dict) else None
    return path if isinstance(path, str) else ""
