"""The `hooks:` section of the settings: lifecycle hooks in Claude Code's shape (docs/adr/0043).

The entries are typed loosely on purpose: `forge.agent.hooks.config` judges them and warns
about one it cannot use, so one bad entry does not cost its neighbours.
"""

from __future__ import annotations

from pydantic import ConfigDict

from forge.config.field_docs import DocumentedModel


class HookCommandSettings(DocumentedModel):
    """One hook: a shell command run with the event's JSON on stdin (docs/adr/0043). Kept
    loose here so one bad entry does not cost its neighbours: `forge.agent.hooks.config`
    checks `type` and `timeout` and warns about an entry it cannot use."""

    model_config = ConfigDict(extra="allow")

    type: str = "command"
    """The kind of hook; only "command" is supported."""
    command: str = ""
    """The shell command (`/bin/sh -c`), run in the workspace."""
    timeout: float | None = None
    """Seconds before the hook's process group is killed (default 60)."""


class HookMatcherSettings(DocumentedModel):
    """A matcher group: the hooks that run when `matcher` matches (a regex on the tool name
    for tool events; empty or "*" matches everything)."""

    model_config = ConfigDict(extra="allow")

    matcher: str = ""
    """Regex on the tool name (Forge's or Claude Code's: "Bash|Write"), the SessionStart
    source, the compaction trigger or the notification type."""
    hooks: list[HookCommandSettings] = []
    """The commands to run."""


class HooksSettings(DocumentedModel):
    """Lifecycle hooks, in Claude Code's shape: each event maps to matcher groups
    (docs/adr/0043). Project hooks (`.forge/hooks.json`, `.claude/settings.json`) are read
    beside these and run only in a trusted workspace."""

    model_config = ConfigDict(extra="ignore", validate_default=True)
    """As every section of `Settings` (`forge.config.settings`)."""

    disabled: bool = False
    """Run no hooks at all, the user's or the workspace's."""
    PreToolUse: list[HookMatcherSettings] = []
    """Before a tool call (exit 2 or a deny refuses it)."""
    PostToolUse: list[HookMatcherSettings] = []
    """After a tool call succeeded."""
    PostToolUseFailure: list[HookMatcherSettings] = []
    """After a tool call failed."""
    UserPromptSubmit: list[HookMatcherSettings] = []
    """Before a prompt is sent (exit 2 keeps it from the model)."""
    Stop: list[HookMatcherSettings] = []
    """When the agent ends its turn (exit 2 makes it go on, at most 3 times)."""
    SessionStart: list[HookMatcherSettings] = []
    """When a session starts, resumes or is cleared."""
    SessionEnd: list[HookMatcherSettings] = []
    """When a session ends."""
    PreCompact: list[HookMatcherSettings] = []
    """Before the context is compacted."""
    PostCompact: list[HookMatcherSettings] = []
    """After the context was compacted."""
    Notification: list[HookMatcherSettings] = []
    """When Forge notifies the user (an approval is needed, a turn ended)."""
    SubagentStop: list[HookMatcherSettings] = []
    """When a subagent ends."""
