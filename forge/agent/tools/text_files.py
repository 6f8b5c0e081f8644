"""Reading and writing the files tools touch: regular files only, byte-faithfully.

A FIFO, a socket or a device is not a file a tool should open: reading a FIFO with no writer
blocks forever, a device may never end. Every read and write here refuses anything that is
not a regular file, checked on the opened descriptor (opened non-blocking, so even the check
cannot hang).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from forge.agent.tools.base import ToolError

_READ_SIZE = 1 << 20


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words: "a FIFO (named pipe)", "a socket", …"""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"


def not_regular_error(shown: str, mode: int) -> ToolError:
    """The error for a path that is neither a regular file nor a directory."""
    return ToolError(f"'{shown}' is {kind_of(mode)}; file tools only work on regular files")


def read_regular_bytes(path: Path, shown: str) -> bytes | None:
    """The whole content of the regular file at `path`, or None if nothing is there.

    Raises `ToolError` for a directory ("'x' is a directory"), anything else that is not a
    regular file, and unreadable files. Never blocks on a FIFO or a device.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise not_regular_error(shown, mode)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"'{shown}' is a directory") from None
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise ToolError(f"'{shown}' is a directory")
        if not stat.S_ISREG(mode):
            raise not_regular_error(shown, mode)
        chunks: list[bytes] = []
        while chunk := os.read(descriptor, _READ_SIZE):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as error:
        raise ToolError(f"cannot read '{shown}': {error.strerror}") from None
    finally:
        os.close(descriptor)


def read_text_for_edit(path: Path, shown: str, *, strict: bool) -> str | None:
    """The file's text, or None if it does not exist.

    Raises `ToolError` for directories, other non-regular files and unreadable files. With
    `strict`, a file that is not valid UTF-8 is refused, because writing back a lossy decoding
    would corrupt it.
    """
    data = read_regular_bytes(path, shown)
    if data is None:
        return None
    if not strict:
        return data.decode("utf-8", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"'{shown}' is not UTF-8 text; it cannot be edited safely") from None


def write_text(path: Path, shown: str, content: str) -> None:
    """Write `content` as UTF-8 exactly as given (no newline translation), creating parents.

    Refuses (`ToolError`) when something other than a regular file is at `path`.
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise ToolError(f"cannot write '{shown}': {error.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise not_regular_error(shown, mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, flags, 0o666)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as file:
            opened = os.fstat(descriptor).st_mode
            if not stat.S_ISREG(opened):
                raise not_regular_error(shown, opened)
            file.write(content)
    except OSError as error:
        raise ToolError(f"cannot write '{shown}': {error.strerror}") from None
