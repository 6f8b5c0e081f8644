"""Messages rendered as plain text for the summarization model to read."""

from __future__ import annotations

from collections.abc import Sequence

from forge.context.ledger import describe_call
from forge.llm.messages import Message, MessageKind

_LABELS = {
    MessageKind.SUMMARY: "my earlier summary",
    MessageKind.GOAL_BATCH: "my earlier work on several requests, summarized",
    MessageKind.PRUNED: "pruned",
    MessageKind.OBSERVATION: "output",
    MessageKind.PLAN: "my plan (pinned; kept as it is)",
    MessageKind.LEDGER: "the work ledger (pinned; kept as it is)",
}


def render_message(message: Message) -> str:
    """One message as a labelled block (reasoning is never included: it is not sent either)."""
    if message.kind is not MessageKind.NORMAL:
        return f"[{message.role}: {_LABELS[message.kind]}]\n{message.content}"
    if message.role == "tool":
        return f"[tool result: {message.name or 'tool'}]\n{message.content}"
    lines = [f"[{message.role}]"]
    if message.content:
        lines.append(message.content)
    # Named, never sent: the summarizer reads no image bytes (docs/adr/0055, part 2).
    lines.extend(f"(attached image: {image.describe()})" for image in message.images)
    for call in message.tool_calls:
        lines.append(f"(tool call) {describe_call(call, limit=2000)}")
    return "\n".join(lines)


def render_messages(messages: Sequence[Message]) -> str:
    """Messages as labelled blocks separated by blank lines (paragraph boundaries for chunking)."""
    return "\n\n".join(render_message(message) for message in messages)
