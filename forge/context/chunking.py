"""Split long text into token-bounded chunks on natural boundaries, with overlap.

Paragraphs first, then sentences, then character cuts for a sentence that alone is too long.
Every piece keeps its trailing whitespace, so the chunks without their overlap join back into
the original text exactly. Each chunk after the first starts with the tail of the one before
(about `overlap` tokens of whole pieces, or characters for cuts) so a fact cut at a boundary is
seen whole by at least one chunk.

Linear in the text (docs/adr/0036): every piece is counted once, and a character cut counts
only a window about one chunk long, sized from what fitted before, never the rest of the text
(a 2 MB sentence once took hours, recounting the remainder at every step of a binary search).
`split_text_async` splits a huge text in segments of `SEGMENT_CHARACTERS` off the event loop,
one at a time, so a cancel (Esc, `--timeout`, a signal) lands between two segments.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

from forge.llm.text_segments import SEGMENT_CHARACTERS, segments

CountTokens = Callable[[str], int]

_PARAGRAPH_SPLIT = re.compile(r"(?<=\n)\s*\n")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_FIRST_GUESS_CHARACTERS_PER_TOKEN = 4
_GROW_ATTEMPTS = 3
"""How often a cut that fits well under the limit is widened toward it."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk: `text` includes the overlap; `overlap_text` is the carried-over prefix."""

    text: str
    overlap_text: str = ""

    @property
    def own_text(self) -> str:
        """The chunk without the overlap carried over from the chunk before."""
        return self.text[len(self.overlap_text) :]


def split_text(text: str, chunk_size: int, overlap: int, count_tokens: CountTokens) -> list[Chunk]:
    """Chunks of at most about `chunk_size` tokens (overlap included) covering `text` in order."""
    _check_sizes(chunk_size, overlap)
    chunks, _ = _split(text, chunk_size, overlap, count_tokens, "")
    return chunks


async def split_text_async(
    text: str,
    chunk_size: int,
    overlap: int,
    count_tokens: CountTokens,
    *,
    segment_characters: int = SEGMENT_CHARACTERS,
) -> list[Chunk]:
    """`split_text` for texts of any size without blocking the event loop: each segment of
    about `segment_characters` is split in a worker thread, and the overlap carries across
    segments (a chunk never spans two segments)."""
    _check_sizes(chunk_size, overlap)
    if len(text) <= segment_characters:
        return split_text(text, chunk_size, overlap, count_tokens)
    chunks: list[Chunk] = []
    carried = ""
    for segment in segments(text, segment_characters):
        more, carried = await asyncio.to_thread(
            _split, segment, chunk_size, overlap, count_tokens, carried
        )
        chunks.extend(more)
    return chunks


def _check_sizes(chunk_size: int, overlap: int) -> None:
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    if not 0 <= overlap < chunk_size:
        raise ValueError("overlap must be at least 0 and below chunk_size")


def _split(
    text: str, chunk_size: int, overlap: int, count_tokens: CountTokens, carried: str
) -> tuple[list[Chunk], str]:
    """The chunks of `text`, the first starting with `carried`, and the tail to carry on."""
    if not text:
        return [], carried
    room = chunk_size - overlap
    chunks: list[Chunk] = []
    current: list[tuple[str, int]] = []
    current_tokens = 0
    for piece, piece_tokens in _pieces(text, room, count_tokens):
        if current and current_tokens + piece_tokens > room:
            chunks.append(Chunk(carried + "".join(part for part, _ in current), carried))
            carried = _tail(current, overlap, count_tokens)
            current, current_tokens = [], 0
        current.append((piece, piece_tokens))
        current_tokens += piece_tokens
    if current:
        chunks.append(Chunk(carried + "".join(part for part, _ in current), carried))
        carried = _tail(current, overlap, count_tokens)
    return chunks, carried


def _pieces(text: str, limit: int, count_tokens: CountTokens) -> list[tuple[str, int]]:
    """Paragraphs, sentences or cuts of at most `limit` tokens each, with their counts,
    joining back to `text`. Each paragraph and sentence is counted once."""
    pieces: list[tuple[str, int]] = []
    for paragraph in _split_keeping(text, _PARAGRAPH_SPLIT):
        tokens = count_tokens(paragraph)
        if tokens <= limit:
            pieces.append((paragraph, tokens))
            continue
        for sentence in _split_keeping(paragraph, _SENTENCE_SPLIT):
            tokens = count_tokens(sentence)
            if tokens <= limit:
                pieces.append((sentence, tokens))
            else:
                pieces.extend(_cut(sentence, limit, count_tokens))
    return pieces


def _split_keeping(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Split after each match, keeping the separator at the end of the piece before it."""
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        if match.end() > start:
            pieces.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return [piece for piece in pieces if piece]


def _cut(text: str, limit: int, count_tokens: CountTokens) -> list[tuple[str, int]]:
    """Character cuts of at most `limit` tokens each, in order, with their counts."""
    pieces: list[tuple[str, int]] = []
    start = 0
    guess = limit * _FIRST_GUESS_CHARACTERS_PER_TOKEN
    while start < len(text):
        length, tokens = _fitting_length(text, start, limit, count_tokens, guess, from_end=False)
        pieces.append((text[start : start + length], tokens))
        start += length
        guess = length  # the next window is sized from what fitted
    return pieces


def _fitting_length(
    text: str,
    position: int,
    limit: int,
    count_tokens: CountTokens,
    guess: int,
    *,
    from_end: bool,
) -> tuple[int, int]:
    """The length (at least 1) and count of a slice of `text` of at most `limit` tokens,
    close to the longest: starting at `position`, or (`from_end`) ending at the text's end.

    Windows start at `guess` characters and are rescaled by the ratio of `limit` to what they
    counted, so each count covers about one limit's worth of text, whatever the text's size.
    """
    available = len(text) - position if not from_end else len(text)

    def window(length: int) -> str:
        if from_end:
            return text[len(text) - length :]
        return text[position : position + length]

    length = max(1, min(guess, available))
    tokens = count_tokens(window(length))
    while tokens > limit and length > 1:  # shrink by at least a tenth per step
        length = max(1, min(length - 1, length * limit // tokens * 9 // 10))
        tokens = count_tokens(window(length))
    for _ in range(_GROW_ATTEMPTS):
        if length >= available or tokens >= limit:
            break
        wider = min(available, max(length + 1, length * limit // max(tokens, 1)))
        wider_tokens = count_tokens(window(wider))
        if wider_tokens > limit:
            break
        length, tokens = wider, wider_tokens
    return length, tokens


def _tail(pieces: list[tuple[str, int]], overlap: int, count_tokens: CountTokens) -> str:
    """The last pieces worth at most `overlap` tokens; a character tail when none fits whole."""
    if overlap <= 0:
        return ""
    kept: list[str] = []
    total = 0
    for piece, tokens in reversed(pieces):
        if total + tokens > overlap:
            break
        kept.insert(0, piece)
        total += tokens
    if kept:
        return "".join(kept)
    last = pieces[-1][0]
    guess = overlap * _FIRST_GUESS_CHARACTERS_PER_TOKEN
    length, tokens = _fitting_length(last, 0, overlap, count_tokens, guess, from_end=True)
    return last[len(last) - length :] if tokens <= overlap else ""
