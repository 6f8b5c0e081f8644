"""Split long text into token-bounded chunks on natural boundaries, with overlap.

Paragraphs first, then sentences, then hard character cuts for a sentence that alone is too
long. Every piece keeps its trailing whitespace, so the chunks without their overlap join back
into the original text exactly. Each chunk after the first starts with the tail of the one
before (about `overlap` tokens of whole pieces, or characters for hard cuts) so a fact cut at a
boundary is seen whole by at least one chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

CountTokens = Callable[[str], int]

_PARAGRAPH_SPLIT = re.compile(r"(?<=\n)\s*\n")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")


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
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    if not 0 <= overlap < chunk_size:
        raise ValueError("overlap must be at least 0 and below chunk_size")
    if not text:
        return []
    room = chunk_size - overlap
    pieces = _pieces(text, room, count_tokens)
    chunks: list[Chunk] = []
    current: list[str] = []
    current_tokens = 0
    carried = ""
    for piece in pieces:
        piece_tokens = count_tokens(piece)
        if current and current_tokens + piece_tokens > room:
            chunks.append(Chunk(carried + "".join(current), carried))
            carried = _tail(current, overlap, count_tokens)
            current, current_tokens = [], 0
        current.append(piece)
        current_tokens += piece_tokens
    if current:
        chunks.append(Chunk(carried + "".join(current), carried))
    return chunks


def _pieces(text: str, limit: int, count_tokens: CountTokens) -> list[str]:
    """Paragraphs, sentences or hard cuts, each at most `limit` tokens, joining back to text."""
    pieces: list[str] = []
    for paragraph in _split_keeping(text, _PARAGRAPH_SPLIT):
        if count_tokens(paragraph) <= limit:
            pieces.append(paragraph)
            continue
        for sentence in _split_keeping(paragraph, _SENTENCE_SPLIT):
            if count_tokens(sentence) <= limit:
                pieces.append(sentence)
            else:
                pieces.extend(_hard_cut(sentence, limit, count_tokens))
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


def _hard_cut(text: str, limit: int, count_tokens: CountTokens) -> list[str]:
    """Character cuts of at most `limit` tokens each (the longest prefix that fits)."""
    pieces: list[str] = []
    rest = text
    while rest:
        if count_tokens(rest) <= limit:
            pieces.append(rest)
            break
        low, high = 1, len(rest)
        while low < high:  # the longest prefix that fits, by binary search
            middle = (low + high + 1) // 2
            if count_tokens(rest[:middle]) <= limit:
                low = middle
            else:
                high = middle - 1
        pieces.append(rest[:low])
        rest = rest[low:]
    return pieces


def _tail(pieces: list[str], overlap: int, count_tokens: CountTokens) -> str:
    """The last pieces worth at most `overlap` tokens; a character tail when none fits whole."""
    if overlap <= 0:
        return ""
    kept: list[str] = []
    total = 0
    for piece in reversed(pieces):
        tokens = count_tokens(piece)
        if total + tokens > overlap:
            break
        kept.insert(0, piece)
        total += tokens
    if kept:
        return "".join(kept)
    last = pieces[-1]
    low, high = 0, len(last)
    while low < high:  # the longest suffix of the last piece that fits
        middle = (low + high + 1) // 2
        if count_tokens(last[-middle:]) <= overlap:
            low = middle
        else:
            high = middle - 1
    return last[-low:] if low else ""
