"""Text that is not valid Unicode repaired once, where it enters Forge (issue 34).

JSON may carry an unpaired UTF-16 surrogate (`"a\\ud800b"` is a valid escape), and Python
decodes it into a `str` that cannot be encoded as UTF-8: written to a session file, a pipe or
an HTTP body it raises, and a session that kept it fails at every later request. Bytes that
are not UTF-8 are decoded with `errors="replace"` where Forge reads them (files, commands,
the ACP pipe); this module handles what arrives as a `str` already: server streams of both
APIs, tool arguments, MCP results, editor input, `forge run`'s task, resumed session lines.

- `repaired(text)`: a valid surrogate pair becomes its character; a lone surrogate becomes
  U+FFFD (the replacement character). Valid text is returned as it is, cheaply.
- `StreamRepair`: the same over a stream of pieces, holding a high surrogate at the end of a
  piece until the next one says whether it was half of a pair (a pair split across two
  chunks stays one character).
- `repaired_value`: the same inside a decoded JSON value (dicts, lists, strings).

Every replacement is counted (`replaced_characters`) and logged once per repair, so what was
lost is visible in the log. A pure module with no dependency: core and front ends use it.
"""

from __future__ import annotations

import logging
import re
from typing import Any

logger = logging.getLogger(__name__)

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate (high or low) in raw JSON text: the only way JSON text that
is valid UTF-8 can decode into a `str` holding one."""


class _Tally:
    characters = 0


def replaced_characters() -> int:
    """How many characters this process replaced so far (lone surrogates)."""
    return _Tally.characters


def _count(replaced: int, where: str) -> None:
    if replaced:
        _Tally.characters += replaced
        logger.warning("replaced %d invalid character(s) in text from %s", replaced, where)


def is_valid(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (holds no surrogate)."""
    return text.isascii() or _SURROGATE.search(text) is None


def repaired(text: str, where: str = "outside") -> str:
    """`text` with valid surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if is_valid(text):
        return text
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    _count(fixed.count(REPLACEMENT) - text.count(REPLACEMENT), where)
    return fixed


def may_hold_surrogates(raw_json: str) -> bool:
    """Whether decoding this JSON text could give a string holding a surrogate: a cheap test
    that lets callers skip `repaired_value` for nearly every line."""
    return _ESCAPED_SURROGATE.search(raw_json) is not None or not is_valid(raw_json)


def repaired_value(value: Any, where: str = "outside") -> Any:
    """A decoded JSON value with every string in it (keys too) `repaired`."""
    if isinstance(value, str):
        return repaired(value, where)
    if isinstance(value, dict):
        return {repaired(str(k), where): repaired_value(v, where) for k, v in value.items()}
    if isinstance(value, list):
        return [repaired_value(item, where) for item in value]
    return value


class StreamRepair:
    """`repaired` over a stream of pieces: `feed` each piece, `flush` at the end."""

    def __init__(self, where: str = "outside") -> None:
        self._where = where
        self._held = ""

    def feed(self, piece: str) -> str:
        """The repaired text that can be given out now (a trailing high surrogate waits)."""
        if not self._held and is_valid(piece):
            return piece
        text = self._held + piece
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return repaired(text, self._where)

    def flush(self) -> str:
        """What is still held (a lone high surrogate, so U+FFFD), or ""."""
        held, self._held = self._held, ""
        return repaired(held, self._where) if held else ""
