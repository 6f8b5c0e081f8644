"""A tool call's status and status text in the chat, live (`tool_outcome`) and resumed from
its recorded result (`recorded_tool_outcome`): one wording for both. Pure functions, kept out of
`widgets.chat` so that `forge.tui.history` reads them without importing the chat."""

from __future__ import annotations

from forge.agent.message_meta import child_reason
from forge.llm.messages import Message
from forge.tui.widgets.formatting import shorten

MAX_REJECTION_STATUS = 200
"""Characters of a rejection's reason shown in its tool row's title."""


def tool_outcome(
    result: str,
    *,
    is_error: bool,
    exit_code: int | None,
    rejected: bool = False,
    refused: bool = False,
    by_hook: bool = False,
    diff_stats: tuple[int, int] | None = None,
) -> tuple[str, str]:
    """A tool call's (status, text) for its block: rejected with the reason, refused by the
    permission mode or by a PreToolUse hook (`by_hook`; styled like a rejection: it did not
    run), the exit code of a command, "failed", "+added -removed" for an edit, or "done"."""
    if refused:
        return "rejected", "blocked by a hook" if by_hook else "refused (read-only mode)"
    if rejected:
        # The result says why ("rejected by user: not now"); the title shows it, wrapping
        # rather than cutting the user's reason (bounded only against a pasted essay).
        return "rejected", shorten(result, MAX_REJECTION_STATUS) or "rejected"
    if exit_code is not None:
        return ("error" if exit_code != 0 else "ok"), f"exit {exit_code}"
    if is_error:
        return "error", "failed"
    if diff_stats is not None:
        return "ok", f"+{diff_stats[0]} -{diff_stats[1]}"
    return "ok", "done"


def recorded_tool_outcome(result: Message | None) -> tuple[str, str]:
    """The (status, text) of a call from its recorded result message (a resumed session):
    what the live chat showed, so a rejected or cancelled call never reads as done."""
    if result is None:
        return "error", "cancelled"
    meta = result.meta
    if child_reason(result) == "interrupted":
        return "error", "interrupted"  # a child the user stopped (live: `ChatView.end_turn`)
    if meta.get("cancelled"):
        skipped = result.content.startswith("[skipped")
        return "error", "skipped" if skipped else "cancelled"
    # Sessions written before "rejected" was recorded still carry the result's wording.
    rejected = bool(meta.get("rejected")) or result.content.startswith("rejected by user")
    # Likewise for calls refused in read-only mode (forge.agent.modes.refusal_text).
    refused = bool(meta.get("refused")) or result.content.startswith("read-only mode: ")
    exit_code = meta.get("exit_code")
    stats = meta.get("diff_stats")
    return tool_outcome(
        result.content,
        is_error=bool(meta.get("is_error")) or rejected,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        rejected=rejected,
        refused=refused,
        by_hook=bool(meta.get("hook")),
        diff_stats=(int(stats[0]), int(stats[1]))
        if isinstance(stats, list) and len(stats) == 2
        else None,
    )
