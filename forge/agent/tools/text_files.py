"""Reading and writing the text files the edit tools change, byte-faithfully."""

from __future__ import annotations

from pathlib import Path

from forge.agent.tools.base import ToolError


def read_text_for_edit(path: Path, shown: str, *, strict: bool) -> str | None:
    """The file's text, or None if it does not exist.

    Raises `ToolError` for directories and unreadable files. With `strict`, a file that is not
    valid UTF-8 is refused, because writing back a lossy decoding would corrupt it.
    """
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    if not strict:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"'{shown}' is not UTF-8 text; it cannot be edited safely") from None


def write_text(path: Path, shown: str, content: str) -> None:
    """Write `content` as UTF-8 exactly as given (no newline translation), creating parents."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as file:
            file.write(content)
    except OSError as error:
        raise ToolError(f"cannot write '{shown}': {error.strerror}") from None
