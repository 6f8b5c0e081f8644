"""Read Server-Sent Events from a streamed HTTP body, forgiving an unterminated last event.

The SSE rules say an event is dispatched at a blank line and an unfinished event at the end of
the stream is discarded. Real servers break that: LitServe ends an error stream right after
the JSON, with no closing blank line, so a strict reader loses the server's message. This
reader follows the rules everywhere else (lines end in CRLF, LF or CR, possibly split across
reads; `:` starts a comment; several `data:` lines join with newlines) but dispatches a last
event that has data when the stream ends (docs/adr/0019).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One event: its `event` name ("message" when none was given) and its data."""

    event: str
    data: str


class _EventBuilder:
    """The fields of the event being read."""

    def __init__(self) -> None:
        self.event = ""
        self.data: list[str] = []

    def field(self, line: str) -> None:
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        # `id` and `retry` mean nothing to a one-shot completion stream; unknown fields are
        # ignored, as the rules say.

    def dispatch(self) -> ServerSentEvent | None:
        event = None
        if self.data:
            event = ServerSentEvent(self.event or "message", "\n".join(self.data))
        self.event, self.data = "", []
        return event


_LINE_END = re.compile("\r\n|\r|\n")


def _lines(buffer: str) -> tuple[list[str], str]:
    """The complete lines in `buffer` and the unfinished rest. A CR at the very end stays in
    the rest: the LF of its CRLF may be in the next read. Split by a regular expression, not
    character by character: a stream of many megabytes costs one pass in C."""
    trailing_cr = buffer.endswith("\r")
    lines = _LINE_END.split(buffer[:-1] if trailing_cr else buffer)
    rest = lines.pop()
    return lines, rest + "\r" if trailing_cr else rest


def _events(lines: Iterable[str], builder: _EventBuilder) -> list[ServerSentEvent]:
    events = []
    for line in lines:
        if not line:
            event = builder.dispatch()
            if event is not None:
                events.append(event)
        elif not line.startswith(":"):
            builder.field(line)
    return events


async def read_events(chunks: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    """The events in a stream of decoded text chunks, the unterminated last one included."""
    builder = _EventBuilder()
    pending: list[str] = []  # the unfinished line's pieces: a long line is joined once
    async for chunk in chunks:
        if "\n" not in chunk and "\r" not in chunk:
            pending.append(chunk)
            continue
        lines, rest = _lines("".join(pending) + chunk)
        pending = [rest] if rest else []
        for event in _events(lines, builder):
            yield event
    rest = "".join(pending)
    # The stream ended: whatever is left is a last line (a lone CR ended one), then the end
    # of the stream dispatches the event being read.
    for event in _events([*rest.split("\r"), ""] if rest else [""], builder):
        yield event
