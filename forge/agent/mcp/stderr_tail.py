"""A stdio MCP server's stderr, kept as a bounded tail (docs/adr/0036).

The server writes into a pipe; the event loop reads it as it arrives and keeps the newest
`limit` bytes. Before, stderr went whole into a temporary file (120 MB from a chatty server)
though only its last lines were ever shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TextIO

READ_BYTES = 64 * 1024
"""Bytes read from the pipe per wake-up."""


class StderrTail:
    """A pipe for a server's stderr (`writer`, handed to the SDK) and the newest `limit`
    bytes read from it. Needs a running event loop; `close()` ends it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.dropped = 0
        """Bytes read and let go (older than the tail)."""
        self._buffer = bytearray()
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        self._read_end: int | None = read_end
        self.writer: TextIO = os.fdopen(write_end, "w", encoding="utf-8", errors="replace")
        """The write end: the server process's stderr."""
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(read_end, self._read)

    def _read(self, budget: int = READ_BYTES) -> bool:
        """Read what is waiting, at most `budget` bytes; False once nothing more can come."""
        if self._read_end is None:
            return False
        try:
            data = os.read(self._read_end, budget)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._stop_reading()
            return False
        self._buffer += data
        excess = len(self._buffer) - self.limit
        if excess > 0:
            del self._buffer[:excess]
            self.dropped += excess
        return True

    def text(self) -> str:
        """The tail as text, after reading what is waiting (at most a few times the limit,
        so a server that never stops writing cannot hold the caller)."""
        read = 0
        while read < 4 * max(self.limit, READ_BYTES) and self._read():
            read += READ_BYTES
        return self._buffer.decode("utf-8", errors="replace")

    def _stop_reading(self) -> None:
        if self._read_end is not None:
            with contextlib.suppress(Exception):  # the loop may be closed already
                self._loop.remove_reader(self._read_end)
            with contextlib.suppress(OSError):
                os.close(self._read_end)
            self._read_end = None

    def close(self) -> None:
        """Stop reading and close both ends (the tail read so far stays readable)."""
        self._stop_reading()
        with contextlib.suppress(OSError):
            self.writer.close()
