"""Hypothesis: every recorded stream of the corpus, cut into pieces at arbitrary byte
boundaries, gives exactly the events (or the error) it gives in one piece.

The pieces must reach the SSE parser exactly as cut, which a TCP connection does not promise
(the kernel may join or split writes), so the bytes are handed to the real provider by an
httpx transport that yields them piece by piece; everything above the socket is Forge's own
code. The loopback-server replays in test_corpus_replay.py cover the same files over HTTP.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge.llm.errors import LLMError
from forge.llm.messages import user
from forge.llm.openai_provider import OpenAICompatibleProvider
from forge.llm.stream import StreamEvent, StreamFinished
from tests.llm.test_corpus_replay import SSE_FILES, corpus_id
from tests.support.openai_server import recorded_response

pytestmark = pytest.mark.skipif(not SSE_FILES, reason="shared corpus not present")


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def _cut(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts} | {0, len(data)})
    return [data[start:end] for start, end in itertools.pairwise(points)]


def _comparable(event: StreamEvent) -> object:
    """The event, with the assembled message's fresh id and timestamp left out."""
    if isinstance(event, StreamFinished):
        done = event.completion
        message = done.message
        return (message.content, message.reasoning, message.tool_calls, done.usage,
                done.finish_reason, done.model)  # fmt: skip
    return event


async def _outcome(path: Path, pieces: list[bytes]) -> tuple[list[object], str | None]:
    status, content_type = recorded_response(path)

    def respond(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": content_type or "text/event-stream"}
        return httpx.Response(status, headers=headers, stream=_Pieces(pieces))

    # The one transport stand-in of the suite: a real socket may merge or re-split the chunks,
    # so only an in-process transport can hand the provider these exact byte boundaries.
    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    provider = OpenAICompatibleProvider(
        "requested-model", "http://corpus.invalid/v1", "sk-test", client=client, max_retries=0
    )
    events: list[object] = []
    error: str | None = None
    try:
        async for event in provider.stream([user("replay")]):
            events.append(_comparable(event))
    except LLMError as caught:
        error = f"{type(caught).__name__}: {caught}"
    finally:
        await client.aclose()
    return events, error


@pytest.mark.parametrize("path", SSE_FILES, ids=corpus_id)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=40))
def test_any_split_gives_the_same_events(path: Path, cuts: list[int]) -> None:
    data = path.read_bytes()
    whole = asyncio.run(_outcome(path, [data]))
    split = asyncio.run(_outcome(path, _cut(data, cuts)))
    assert split == whole


@pytest.mark.parametrize("path", SSE_FILES[:3], ids=corpus_id)
def test_single_byte_pieces_give_the_same_events(path: Path) -> None:
    data = path.read_bytes()
    whole = asyncio.run(_outcome(path, [data]))
    assert asyncio.run(_outcome(path, [data[i : i + 1] for i in range(len(data))])) == whole
