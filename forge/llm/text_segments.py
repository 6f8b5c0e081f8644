"""Huge texts in slices, so work on them can leave the event loop and be cancelled between
slices (docs/adr/0036).

A 50 MB message once held the loop for minutes while it was counted and chunked: `--timeout`,
Esc and SIGTERM waited for it. Here a text above `SEGMENT_CHARACTERS` is cut into segments
(at a paragraph break, else a line break, else a space, in the second half of the window;
else anywhere) and each segment is worked on in a worker thread, one at a time: a cancel
waits for one segment at most, and the process never waits long for a thread at exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

SEGMENT_CHARACTERS = 256 * 1024
"""Characters per slice of off-loop work (tiktoken counts one in a few tens of ms)."""

_BREAKS = ("\n\n", "\n", " ")


def segments(text: str, size: int = SEGMENT_CHARACTERS) -> Iterator[str]:
    """`text` in consecutive slices of at most `size` characters (at least half of it unless
    the text ends), cut after a natural break where one is near the end; they join back to
    `text` exactly."""
    if size <= 0:
        raise ValueError("size must be positive")
    start = 0
    while len(text) - start > size:
        end = start + size
        middle = start + size // 2
        for separator in _BREAKS:
            found = text.rfind(separator, middle, end)
            if found >= 0:
                end = found + len(separator)
                break
        yield text[start:end]
        start = end
    if start < len(text):
        yield text[start:]


async def count_text_async(
    count_tokens: Callable[[str], int], text: str, *, size: int = SEGMENT_CHARACTERS
) -> int:
    """Tokens in `text`: counted on the loop when it is small, else segment by segment in a
    worker thread (the sum of the segments' counts, which may differ from one count of the
    whole by a token per segment boundary)."""
    if len(text) <= size:
        return count_tokens(text)
    total = 0
    for segment in segments(text, size):
        total += await asyncio.to_thread(count_tokens, segment)
    return total
