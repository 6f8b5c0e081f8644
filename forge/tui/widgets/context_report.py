"""The text of `/context` and `/sessions`: what fills the window, recent compactions, sessions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from forge.agent.events import SummarizationCompleted, SummarizationFailed
from forge.llm.messages import Message
from forge.session.model_types import TokenCounter
from forge.session.saved_sessions import SessionInfo
from forge.tui.compaction import is_skip, skip_reason
from forge.tui.widgets.chat import SUMMARY_KINDS
from forge.tui.widgets.formatting import format_tokens, shorten
from forge.tui.widgets.summarization_panel import result_label


@dataclass(frozen=True, slots=True)
class ContextBreakdown:
    """Tokens per kind of content in the conversation (as the counter counts them)."""

    system: int = 0
    messages: int = 0
    summaries: int = 0
    tool_outputs: int = 0
    message_count: int = 0
    summary_count: int = 0
    tool_output_count: int = 0
    tool_definitions: int = 0
    """Tokens of the tool definitions sent with every request."""

    @property
    def total(self) -> int:
        """All counted tokens."""
        return (
            self.system + self.messages + self.summaries + self.tool_outputs + self.tool_definitions
        )


def context_breakdown(messages: Sequence[Message], counter: TokenCounter) -> ContextBreakdown:
    """Split the conversation's tokens into system, messages, summaries and tool outputs."""
    system = chat = summaries = tools = 0
    chat_count = summary_count = tool_count = 0
    for message in messages:
        tokens = counter.count_message(message)
        if message.kind in SUMMARY_KINDS:
            summaries += tokens
            summary_count += 1
        elif message.role == "system":
            system += tokens
        elif message.role == "tool":
            tools += tokens
            tool_count += 1
        else:
            chat += tokens
            chat_count += 1
    return ContextBreakdown(system, chat, summaries, tools, chat_count, summary_count, tool_count)


def _compaction_line(event: SummarizationCompleted | SummarizationFailed) -> str:
    if isinstance(event, SummarizationCompleted):
        return f"- {event.strategy} · {event.model} · {result_label(event)}"
    fallback = f", fallback: {event.fallback}" if event.fallback else ""
    if is_skip(event):
        reason = shorten(skip_reason(event), 80)
        return f"- {event.strategy} · {event.model} · nothing to compact ({reason}){fallback}"
    return f"- {event.strategy} · {event.model} · failed: {shorten(event.error, 80)}{fallback}"


def context_report_markdown(
    breakdown: ContextBreakdown,
    *,
    current_tokens: int,
    max_tokens: int,
    recent_compactions: Iterable[SummarizationCompleted | SummarizationFailed],
    window: str = "",
    window_note: str = "",
    ledger: str = "",
) -> str:
    """The `/context` report as markdown. `window` says what the budget was made from and
    where that came from (configured / reported by the server / guessed from the name);
    `window_note`, when given, follows it (said once, when the window is only a guess);
    `ledger`, the work ledger, ends it in a code block (file names and commands are data)."""
    share = f"{current_tokens / max_tokens:.0%}" if max_tokens else "n/a"
    rows = (
        ("System prompt", breakdown.system, ""),
        ("Messages", breakdown.messages, str(breakdown.message_count)),
        ("Summaries", breakdown.summaries, str(breakdown.summary_count)),
        ("Tool outputs", breakdown.tool_outputs, str(breakdown.tool_output_count)),
        ("Tool definitions", breakdown.tool_definitions, ""),
    )
    table = "\n".join(
        f"| {name} | {format_tokens(tokens)} | {count} |" for name, tokens, count in rows
    )
    table += f"\n| Total (local count) | {format_tokens(breakdown.total)} | |"
    compactions = "\n".join(_compaction_line(event) for event in recent_compactions)
    return (
        f"**Context**: {format_tokens(current_tokens)} of {format_tokens(max_tokens)} tokens "
        f"({share})\n\n"
        + (f"**Window**: {window}\n\n" if window else "")
        + (f"{window_note}\n\n" if window_note else "")
        + "| Part | Tokens | Items |\n|---|---:|---:|\n"
        f"{table}\n\n"
        f"**Recent compactions**\n\n{compactions or 'none yet'}"
        + (
            f"\n\n**Work ledger** (in the prompt from the first compaction on)\n\n{_fenced(ledger)}"
            if ledger
            else ""
        )
    )


def _fenced(text: str) -> str:
    """`text` in a code block whose fence no run of backticks in it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _children_under_parents(sessions: Sequence[SessionInfo]) -> list[SessionInfo]:
    """`sessions` with each subagent's session right after its parent's (in the order they
    ran); a child whose parent is not listed stays where it is."""
    ids = {info.id for info in sessions}
    children: dict[str, list[SessionInfo]] = {}
    for info in sessions:
        if info.parent in ids:
            children.setdefault(info.parent, []).append(info)
    ordered: list[SessionInfo] = []
    for info in sessions:
        if info.parent in ids:
            continue
        ordered.append(info)
        ordered.extend(reversed(children.get(info.id, [])))
    return ordered


def sessions_markdown(sessions: Sequence[SessionInfo], current_id: str | None) -> str:
    """The `/sessions` list as markdown, newest first, with how to reopen one."""
    if not sessions:
        return "No saved sessions for this workspace yet."
    lines = ["| Session | Updated | Messages | Model | Title |", "|---|---|---:|---|---|"]
    for info in _children_under_parents(sessions)[:20]:
        updated = datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        marker = " (this one)" if info.id == current_id else ""
        title = info.title.replace("|", "\\|")
        if info.agent:  # a subagent's session, listed under its parent's (docs/adr/0045)
            title = f"└ subagent {info.agent}: {title}"
        lines.append(
            f"| `{info.id}`{marker} | {updated} | {info.messages} | {info.model} | {title} |"
        )
    more = f"\n\n…and {len(sessions) - 20} older." if len(sessions) > 20 else ""
    return (
        "\n".join(lines)
        + more
        + "\n\nResume one here with `/sessions ID` (its last characters are enough), or "
        "start Forge with `forge --resume ID` (latest: `forge --continue`)."
    )
