"""`forge acp`'s stdin and stdout as asyncio streams, also when either is a regular file.

The SDK's stdio transport connects them as pipes, which asyncio refuses for a regular file,
so `forge acp > log.jsonl` (or `< requests.jsonl`) died at start. When both are pipes,
sockets or terminals they go through the SDK as before; otherwise stdout is written directly
(flushed after each message) and a stdin file is read in chunks off the event loop.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from typing import BinaryIO, Protocol

from acp.stdio import stdio_streams

READ_CHUNK = 64 * 1024


class ByteWriter(Protocol):
    """What the transport needs of its output: a StreamWriter, or a file's `FileWriter`."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class FileWriter:
    """A regular file as the protocol's output: each message written and flushed."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        """Write the bytes."""
        self._stream.write(data)

    async def drain(self) -> None:
        """Flush them to the file."""
        self._stream.flush()

    def close(self) -> None:
        """Flush what is left (the file stays open: it is the process's stdout)."""
        self._stream.flush()


def _is_regular_file(stream: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError):
        return False


async def _feed_from_file(reader: asyncio.StreamReader, stream: BinaryIO) -> None:
    while chunk := await asyncio.to_thread(stream.read, READ_CHUNK):
        reader.feed_data(chunk)
    reader.feed_eof()


async def stdio(limit: int) -> tuple[asyncio.StreamReader, ByteWriter]:
    """Streams over this process's stdin and stdout (see the module)."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    input_is_file, output_is_file = _is_regular_file(stdin), _is_regular_file(stdout)
    if not input_is_file and not output_is_file:
        return await stdio_streams(limit=limit)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if input_is_file:
        feeding = loop.create_task(_feed_from_file(reader, stdin))
        feeding.add_done_callback(lambda task: task.cancelled() or task.exception())
    else:
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)
    # Written directly (and flushed per message) also to a pipe when stdin is a file.
    return reader, FileWriter(stdout)
