"""The JSON a hook reads on stdin: the session's fields every event carries, plus the event's
own, named as Claude Code names them (docs/adr/0043). One builder per event, so the callers
(`forge.agent.hooks.tool_call_hooks`, `hook_turns`, `hook_session`) pass what they have and the
spelling stays in one place."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from forge.agent.hooks.events import HookEvent
from forge.agent.hooks.matching import claude_tool_name, hook_tool_input

CLAUDE_PERMISSION_MODES = {
    "ask": "default",
    "accept-edits": "acceptEdits",
    "read-only": "plan",
    "auto": "bypassPermissions",
}
"""Forge's permission mode → Claude Code's `permission_mode` value."""

SessionStartSource = Literal["startup", "resume", "clear", "compact"]
CompactTrigger = Literal["manual", "auto"]


@dataclass(frozen=True, slots=True)
class HookSession:
    """What every hook input carries about the session."""

    session_id: str
    transcript_path: str
    """The session file (Forge's JSONL, not Claude Code's transcript format)."""
    workspace: Path
    """The workspace: the hooks' cwd and `cwd` field."""
    permission_mode: str = "ask"
    """Forge's mode ("ask", "accept-edits", "read-only", "auto")."""

    def base(self, event: HookEvent) -> dict[str, Any]:
        """The fields every event's input has."""
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.workspace),
            "permission_mode": CLAUDE_PERMISSION_MODES.get(
                self.permission_mode, self.permission_mode
            ),
            "forge_permission_mode": self.permission_mode,
            "hook_event_name": event.value,
        }


def tool_payload(
    session: HookSession,
    event: HookEvent,
    tool_name: str,
    arguments: Mapping[str, Any],
    *,
    tool_response: Any = None,
    error: str = "",
    tool_use_id: str = "",
) -> dict[str, Any]:
    """PreToolUse (no response), PostToolUse (`tool_response`) or PostToolUseFailure
    (`error`). `tool_name` is Claude Code's name when it has one (`Bash`), `forge_tool_name`
    always Forge's; `tool_use_id` is the call's id (the same in its Pre and Post input)."""
    payload = session.base(event)
    payload["tool_name"] = claude_tool_name(tool_name)
    payload["forge_tool_name"] = tool_name
    payload["tool_input"] = hook_tool_input(tool_name, arguments, session.workspace)
    payload["tool_use_id"] = tool_use_id
    if event is HookEvent.POST_TOOL_USE:
        payload["tool_response"] = tool_response
    elif event is HookEvent.POST_TOOL_USE_FAILURE:
        payload["error"] = error
    return payload


def prompt_payload(session: HookSession, prompt: str) -> dict[str, Any]:
    """UserPromptSubmit."""
    return {**session.base(HookEvent.USER_PROMPT_SUBMIT), "prompt": prompt}


def stop_payload(
    session: HookSession,
    last_assistant_message: str,
    *,
    stop_hook_active: bool,
    subagent: bool = False,
) -> dict[str, Any]:
    """Stop (or SubagentStop): `stop_hook_active` is true when the turn already goes on
    because a Stop hook blocked, so a hook can avoid blocking forever."""
    event = HookEvent.SUBAGENT_STOP if subagent else HookEvent.STOP
    return {
        **session.base(event),
        "stop_hook_active": stop_hook_active,
        "last_assistant_message": last_assistant_message,
    }


def session_start_payload(session: HookSession, source: SessionStartSource) -> dict[str, Any]:
    """SessionStart: `source` is startup, resume, clear (or compact)."""
    return {**session.base(HookEvent.SESSION_START), "source": source}


def session_end_payload(session: HookSession, reason: str) -> dict[str, Any]:
    """SessionEnd: `reason` is "exit", "clear", "logout" or "other"."""
    return {**session.base(HookEvent.SESSION_END), "reason": reason}


def compact_payload(
    session: HookSession, trigger: CompactTrigger, *, after: bool = False, instructions: str = ""
) -> dict[str, Any]:
    """PreCompact (or PostCompact with `after`): `trigger` manual (/compact) or auto."""
    event = HookEvent.POST_COMPACT if after else HookEvent.PRE_COMPACT
    return {**session.base(event), "trigger": trigger, "custom_instructions": instructions}


def notification_payload(
    session: HookSession, message: str, notification_type: str
) -> dict[str, Any]:
    """Notification: `notification_type` is "permission_prompt" (an approval is needed) or
    "idle_prompt" (a turn ended and Forge waits)."""
    return {
        **session.base(HookEvent.NOTIFICATION),
        "message": message,
        "notification_type": notification_type,
    }
