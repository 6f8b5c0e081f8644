"""The SSE reader on its own: line ends split across reads, comments, multi-line data, and
the unterminated last event real servers send."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest

from forge.llm.sse_reader import ServerSentEvent, read_events


async def pieces(chunks: Sequence[str]) -> AsyncIterator[str]:
    for chunk in chunks:
        yield chunk


async def events(text: str, size: int) -> list[ServerSentEvent]:
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    return [event async for event in read_events(pieces(chunks))]


@pytest.mark.parametrize("size", [1, 2, 3, 1000])
async def test_line_ends_comments_fields_and_multi_line_data(size: int) -> None:
    text = (
        ": keep-alive\r\n\r\n"
        "data: one\r\n\r\n"
        'event: error\rdata: {"a":\rdata: 1}\r\r'
        "id: 7\nretry: 10\ndata:no-space\n\n"
        "event: ignored-without-data\n\n"
    )
    assert await events(text, size) == [
        ServerSentEvent("message", "one"),
        ServerSentEvent("error", '{"a":\n1}'),
        ServerSentEvent("message", "no-space"),
    ]


@pytest.mark.parametrize("ending", ["", "\n", "\r", "\r\n"])
async def test_the_last_event_without_its_blank_line_is_read(ending: str) -> None:
    text = 'data: first\n\ndata: {"error": {"message": "boom"}}' + ending
    assert await events(text, 4) == [
        ServerSentEvent("message", "first"),
        ServerSentEvent("message", '{"error": {"message": "boom"}}'),
    ]


async def test_an_empty_stream_has_no_events() -> None:
    assert await events("", 1) == []
