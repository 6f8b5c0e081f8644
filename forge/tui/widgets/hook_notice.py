"""A hook's notice in the chat (docs/adr/0043): a hook that blocked something, its plain
output, or a warning that it failed — with the hook's name. The text is the hook's own output:
made terminal-safe and shown as plain text (never markup, never Markdown)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from forge.agent.events import HOOK_FILE_PROBLEM, HookBlocked, HookOutput, HookWarning
from forge.text_safety import terminal_safe

HookEventNotice = HookBlocked | HookOutput | HookWarning


class HookNoticeBlock(Static):
    """One hook notice: `-blocked`, `-output` or `-warning`; `agent` names the subagent
    whose call it was about."""

    DEFAULT_CLASSES = "chat-block"
    DEFAULT_CSS = """
    HookNoticeBlock {
        padding: 0 1;
        margin: 0 0 1 0;
        color: $text-muted;
        border-left: outer $primary-darken-2;
        overflow: hidden hidden;
    }
    HookNoticeBlock.-blocked { border-left: outer $warning; color: $text; }
    HookNoticeBlock.-warning { border-left: outer $error; color: $text-warning; }
    """

    def __init__(
        self, event: HookEventNotice, *, agent: str = "", workspace: Path | None = None
    ) -> None:
        kind, text = hook_notice_text(event, workspace)
        if agent:  # a child's call (docs/adr/0045): the parent's hooks run for it too
            text = f"(subagent {agent}) {text}"
        super().__init__(terminal_safe(text), markup=False)
        self.add_class(f"-{kind}")
        self.kind = kind
        self.text = text


def within_workspace(text: str, workspace: Path | None) -> str:
    """`text` with the workspace's absolute path written relative to it (a hook's command
    `/home/me/project/.claude/hooks/check.sh` reads `.claude/hooks/check.sh`) and the home
    directory as `~` (the user config's path)."""
    if workspace is not None:
        text = text.replace(f"{workspace}/", "")
    home = str(Path.home())
    return text.replace(f"{home}/", "~/") if home != "/" else text


def hook_notice_text(event: HookEventNotice, workspace: Path | None = None) -> tuple[str, str]:
    """The notice's kind and its plain text: a title line naming the event and the hook (its
    paths relative to `workspace`), then what the hook said."""
    if isinstance(event, HookBlocked):
        hook = within_workspace(event.hook, workspace)
        return "blocked", f"⛔ {event.event} hook blocked — {hook}\n{event.reason}"
    if isinstance(event, HookOutput):
        hook = within_workspace(event.hook, workspace)
        return "output", f"{event.event} hook — {hook}\n{event.text}"
    if event.event == HOOK_FILE_PROBLEM:
        return "warning", f"⚠ Hooks file problem: {event.text}"
    return "warning", f"⚠ {event.event} hook: {event.text}"


class HookListBlock(Static):
    """`/hooks`: the session's hooks, as plain text (commands are shown as written)."""

    DEFAULT_CLASSES = "chat-block"
    DEFAULT_CSS = """
    HookListBlock { padding: 0 1; margin: 0 0 1 0; border-left: outer $primary-darken-2; }
    """

    def __init__(self, report: str) -> None:
        super().__init__(terminal_safe(report), markup=False)
        self.text = report
