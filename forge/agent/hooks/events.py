"""The hook events, spelled as Claude Code spells them (docs/adr/0043)."""

from __future__ import annotations

from enum import StrEnum


class HookEvent(StrEnum):
    """A moment of a session at which hooks run; the value is the config key and the
    `hook_event_name` a hook receives."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    NOTIFICATION = "Notification"
    SUBAGENT_STOP = "SubagentStop"


EVENT_NAMES = frozenset(event.value for event in HookEvent)
"""Every event name a config may use."""

TOOL_EVENTS = frozenset(
    {HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE, HookEvent.POST_TOOL_USE_FAILURE}
)
"""The events whose matcher is a regex on the tool name."""

MATCHED_FIELD = {
    HookEvent.SESSION_START: "source",
    HookEvent.SESSION_END: "reason",
    HookEvent.PRE_COMPACT: "trigger",
    HookEvent.POST_COMPACT: "trigger",
    HookEvent.NOTIFICATION: "notification_type",
}
"""For the other events with a matcher: the payload field it is matched against. Events in
neither table (UserPromptSubmit, Stop, SubagentStop) ignore the matcher, as Claude Code does."""
