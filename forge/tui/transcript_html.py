"""/export html: the session as one self-contained HTML page — the same rows as the Markdown
export (`forge.tui.transcript_export`), inline CSS, no script, no link, nothing fetched.

Every piece of text from the session is data: the user's messages and answers are rendered
from Markdown with raw HTML turned off (so a `<script>` in an answer shows as text), tool
output and arguments are escaped into `<pre>`.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from markdown_it import MarkdownIt

from forge.llm.messages import Message
from forge.session.saved_sessions import SessionInfo
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

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 50rem; margin: 2rem auto;
       padding: 0 1rem; color: #1d1d1f; background: #fff; }
.user { border-left: 4px solid #3b82f6; padding: .2rem 1rem; margin: 1.5rem 0 .5rem; }
.answer { padding: .2rem 1rem; }
.tool { font-family: ui-monospace, monospace; font-size: 13px; margin: .3rem 1rem; }
.tool .status { color: #666; }
.tool.error .status { color: #b91c1c; }
.forge { color: #555; font-style: italic; margin: .5rem 1rem; padding-left: .6rem;
         border-left: 3px solid #d4d4d8; }
pre { background: #f4f4f5; padding: .6rem; overflow-x: auto; white-space: pre-wrap; }
h1 { font-size: 1.4rem; } .meta { color: #666; font-size: 13px; }
"""


def _markdown(text: str) -> str:
    return str(MarkdownIt("commonmark", {"html": False}).render(text))


def session_html(info: SessionInfo, messages: list[Message]) -> str:
    """The session `info` whose conversation is `messages`, as a self-contained HTML page."""
    title = escape(info.label or "Forge session")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # No request may leave the page: not even a favicon is fetched.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">",
        '<link rel="icon" href="data:,">',
        f"<title>{title}</title><style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        f'<p class="meta">Session {escape(info.id)}'
        + (f" (fork of {escape(info.forked_from)})" if info.forked_from else "")
        + f" · {escape(info.workspace)} · {escape(info.model)}</p>",
    ]
    for row in history_rows(messages):
        if isinstance(row, UserRow):
            parts.append(f'<section class="user"><b>You</b>{_markdown(row.text)}</section>')
        elif isinstance(row, AnswerRow):
            parts.append(f'<section class="answer">{_markdown(row.text)}</section>')
        elif isinstance(row, ToolRow):
            status = escape(row.status_text or row.status)
            parts.append(
                f'<div class="tool {escape(row.status)}"><b>{escape(row.call.name)}</b> '
                f'{escape(row.call.arguments)} — <span class="status">{status}</span>'
            )
            if row.output:
                parts.append(
                    f"<details><summary>output</summary><pre>{escape(row.output)}</pre></details>"
                )
            parts.append("</div>")
        elif isinstance(row, SummaryRow):
            parts.append(
                f'<div class="forge"><b>Forge — {escape(row.label)}</b> of {row.replaced} '
                f"earlier messages{_markdown(row.text)}</div>"
            )
        elif isinstance(row, NoticeRow):
            parts.append(f'<div class="forge">Forge: {_markdown(row.text)}</div>')
        elif isinstance(row, HookRow):
            _, text = hook_notice_text(row.notice, Path(info.workspace))
            by = f" ({escape(row.agent)})" if row.agent else ""
            parts.append(f'<div class="forge"><b>Hook{by}</b><pre>{escape(text)}</pre></div>')
        elif isinstance(row, ExpansionRow):
            parts.append(
                "<details><summary>sent to the model</summary>"
                f"<pre>{escape(row.text)}</pre></details>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)
