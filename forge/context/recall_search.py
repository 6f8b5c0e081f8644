"""Recall by query: find an earlier output by what the agent remembers of it.

A recall key can scroll out of the prompt with the summary that carried it, and the agent may
remember only a word of the output ("the traceback that named `parse_date`"). `search_originals`
looks through this session's originals — tool outputs, observations and summaries, as the
session file first recorded them — for exact words (whitespace between them free, any case) or
a regular expression, and returns each hit as a verbatim span of whole lines with the recall
key of its message and the line numbers, newest message first, bounded in spans and characters
so one answer never floods the prompt. Core code: no I/O (the archive that reads the session
file is `forge.agent.history.recall_archive`). See docs/adr/0050-context-engine-v4.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from forge.context.recall import RECALL_KEY_LENGTH, is_output
from forge.llm.messages import Message, MessageKind

MAX_SPANS = 12
"""Spans one answer holds at most."""
MAX_CHARACTERS = 6000
"""Characters of verbatim text one answer holds at most (about 1,500 tokens)."""
CONTEXT_LINES = 2
"""Lines kept before and after each matching line."""
MAX_PATTERN = 500
"""The longest query taken (a regular expression is compiled from it)."""
_SEARCHED_KINDS = frozenset({MessageKind.SUMMARY, MessageKind.GOAL_BATCH})


class QueryError(ValueError):
    """The query cannot be searched for; the message says why."""


@dataclass(frozen=True, slots=True)
class Span:
    """Lines first..last (1-based, inclusive) of the message `message_id`, verbatim."""

    message_id: str
    first: int
    last: int
    text: str

    def render(self) -> str:
        """The span under a header naming its recall key and lines."""
        key = self.message_id[:RECALL_KEY_LENGTH]
        return f"--- recall {key}, lines {self.first}-{self.last} ---\n{self.text.rstrip()}"


def compile_query(query: str, *, regex: bool) -> re.Pattern[str]:
    """The pattern for `query`: a regular expression as given, or its words in order with any
    whitespace between them; case-insensitive either way."""
    text = query.strip()
    if not text:
        raise QueryError("give the words (or a regular expression) to look for")
    if len(text) > MAX_PATTERN:
        raise QueryError(f"the query is longer than {MAX_PATTERN} characters")
    source = text if regex else r"\s+".join(re.escape(word) for word in text.split())
    try:
        return re.compile(source, re.IGNORECASE | re.MULTILINE)
    except re.error as error:
        raise QueryError(f"not a valid regular expression: {error}") from None


def searched(message: Message) -> bool:
    """Whether recall by query looks in `message`: an output or a summary."""
    return is_output(message) or message.kind in _SEARCHED_KINDS


def search_originals(
    messages: Iterable[Message], pattern: re.Pattern[str]
) -> tuple[list[Span], int]:
    """The spans matching `pattern` in `messages` (given oldest first; searched newest first),
    and how many matching spans were left out by the bounds."""
    spans: list[Span] = []
    left_out = 0
    characters = 0
    for message in reversed(list(messages)):
        if not searched(message):
            continue
        for found in _spans(message, pattern):
            room = MAX_CHARACTERS - characters
            span = found if len(found.text) <= room else _trimmed(found, room)
            if len(spans) >= MAX_SPANS or span is None:
                left_out += 1
                continue
            spans.append(span)
            characters += len(span.text)
    return spans, left_out


def _trimmed(span: Span, room: int) -> Span | None:
    """The span's first whole lines that fit in `room` characters (None if not even one)."""
    kept: list[str] = []
    used = 0
    for line in span.text.splitlines(keepends=True):
        if used + len(line) > room:
            break
        kept.append(line)
        used += len(line)
    if not kept:
        return None
    return Span(span.message_id, span.first, span.first + len(kept) - 1, "".join(kept))


def _spans(message: Message, pattern: re.Pattern[str]) -> list[Span]:
    """Every hit in one message, as merged line ranges with their context."""
    text = message.content
    lines = text.splitlines(keepends=True)
    if not lines:
        return []
    starts = [0]
    for each in lines[:-1]:
        starts.append(starts[-1] + len(each))
    ranges: list[tuple[int, int]] = []
    line = 0
    for match in pattern.finditer(text):
        if match.end() == match.start() and not match.group(0):
            continue  # an empty match says nothing
        while line + 1 < len(starts) and starts[line + 1] <= match.start():
            line += 1
        end_line = line
        while end_line + 1 < len(starts) and starts[end_line + 1] < match.end():
            end_line += 1
        first = max(0, line - CONTEXT_LINES)
        last = min(len(lines) - 1, end_line + CONTEXT_LINES)
        if ranges and first <= ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
        else:
            ranges.append((first, last))
    return [
        Span(message.id, first + 1, last + 1, "".join(lines[first : last + 1]))
        for first, last in ranges
    ]
