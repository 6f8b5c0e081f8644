"""/export and `forge export ID`: a session as the chat showed it, in Markdown, or the
session's JSON (docs/adr/0058-session-search-rename-fork.md).

The Markdown is made from the same rows a resumed chat shows (`history_rows`): the user's
messages, the answers, each tool call with the status it ended on and its output folded in a
`<details>` block, summaries marked as Forge's, and Forge's own lines (notices) marked as
such. Every known secret is masked again on the way out, on top of the session file's own
redaction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge.llm.messages import Message
from forge.session.saved_sessions import SessionInfo, SessionStore, read_records, session_info
from forge.tui.history import (
    AnswerRow,
    ExpansionRow,
    HookRow,
    NoticeRow,
    SummaryRow,
    ToolRow,
    UserRow,
    history_rows,
)
from forge.tui.widgets.hook_notice import hook_notice_text

FORMATS = ("md", "html", "json")
"""What `/export` and `forge export` write."""
OUTPUT_LIMIT = 4000
"""Characters of a tool's output kept in the export (head and tail beyond that)."""


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def _folded(output: str) -> str:
    if len(output) > OUTPUT_LIMIT:
        half = OUTPUT_LIMIT // 2
        output = f"{output[:half]}\n[… {len(output) - OUTPUT_LIMIT} characters …]\n{output[-half:]}"
    return output


def session_markdown(info: SessionInfo, messages: list[Message]) -> str:
    """The session `info` whose conversation is `messages`, as Markdown."""
    lines = [
        f"# {info.label or 'Forge session'}",
        "",
        f"- Session: `{info.id}`"
        + (f" (fork of `{info.forked_from}`)" if info.forked_from else ""),
        f"- Workspace: `{info.workspace}`",
        f"- Model: `{info.model}`",
        "",
    ]
    for row in history_rows(messages):
        if isinstance(row, UserRow):
            lines += ["## You", "", row.text, ""]
        elif isinstance(row, AnswerRow):
            lines += ["### Answer", "", row.text, ""]
        elif isinstance(row, ToolRow):
            lines += [
                f"- **{row.call.name}** `{row.call.arguments}` — {row.status_text or row.status}",
                "",
            ]
            if row.output:
                lines += [
                    "<details><summary>output</summary>",
                    "",
                    _fence(_folded(row.output)),
                    "",
                    "</details>",
                    "",
                ]
        elif isinstance(row, SummaryRow):
            quoted = "\n".join(f"> {line}" for line in row.text.splitlines())
            lines += [
                f"> **Forge — {row.label}** of {row.replaced} earlier messages",
                ">",
                quoted,
                "",
            ]
        elif isinstance(row, NoticeRow):
            lines += [f"> *Forge:* {row.text}", ""]
        elif isinstance(row, HookRow):
            _, text = hook_notice_text(row.notice, Path(info.workspace))
            title, _, said = text.partition("\n")
            by = f" ({row.agent})" if row.agent else ""
            lines += [f"> *Hook{by}:* {title}"]
            lines += [f"> {line}" for line in said.splitlines()]
            lines += [""]
        elif isinstance(row, ExpansionRow):
            lines += [
                "<details><summary>sent to the model</summary>",
                "",
                _fence(_folded(row.text)),
                "",
                "</details>",
                "",
            ]
    return _masked("\n".join(lines).rstrip() + "\n")


def session_json(info: SessionInfo, messages: list[Message]) -> str:
    """The session's JSON: what a listing knows of it and its messages' records."""
    document: dict[str, Any] = {
        "id": info.id,
        "name": info.name,
        "title": info.title,
        "workspace": info.workspace,
        "model": info.model,
        "forked_from": info.forked_from,
        "messages": [message.to_record() for message in messages],
    }
    return _masked(json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def _masked(text: str) -> str:
    from forge.config.secrets import redact

    return redact(text)


def export_session(
    store: SessionStore, workspace: Path | str, session_id: str, fmt: str = "md"
) -> str:
    """Session `session_id` (a whole id, or a unique start or end of one of the workspace's)
    in `fmt`. SessionNotFoundError or ValueError as `SessionStore.find` raises."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: choose {' or '.join(FORMATS)}")
    session_id = store.find(workspace, session_id)
    path = store.path_for(session_id)
    info = session_info(path, *read_records(path))
    if info is None:
        raise ValueError(f"session {session_id} cannot be read")
    messages = list(store.load(session_id).messages)
    if fmt == "html":
        from forge.tui.transcript_html import session_html

        return _masked(session_html(info, messages))
    return (session_markdown if fmt == "md" else session_json)(info, messages)


def export_target(workspace: Path, session_id: str, fmt: str, typed: str = "") -> Path:
    """Where /export writes: the typed path (relative to the workspace), or without one
    `forge-session-ID.md` (or `.json`) in the workspace."""
    if not typed:
        return workspace / f"forge-session-{session_id}.{fmt}"
    path = Path(typed).expanduser()
    return path if path.is_absolute() else workspace / path
