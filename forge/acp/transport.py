"""Newline-delimited JSON-RPC over byte streams that answers bad input instead of dropping it.

The SDK's own stdio transport logs a line that is not JSON and reads on, so a client that
sent it waits forever. This one answers it as JSON-RPC 2.0 says: a parse error (-32700) for
text that is not JSON, an invalid request (-32600) for JSON that is not a request, a
notification or a response; both with `id: null`, since none could be read. The connection
stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

MAX_QUOTED = 200
"""Characters of a bad line quoted back in the error's data."""


def malformed_reply(line: bytes) -> dict[str, Any] | None:
    """The error answer for one received line, or None when the line is a usable message."""
    text = line.decode("utf-8", errors="replace").strip()
    try:
        message = json.loads(text)
    except ValueError as error:
        return _error(PARSE_ERROR, f"Parse error: not JSON ({error})", text)
    if not isinstance(message, dict):
        return _error(
            INVALID_REQUEST,
            "Invalid request: expected one JSON-RPC object per line (batches are not supported)",
            text,
        )
    method = message.get("method")
    if method is not None and not isinstance(method, str):
        return _error(INVALID_REQUEST, "Invalid request: 'method' must be a string", text)
    if method is None and "id" not in message:
        return _error(
            INVALID_REQUEST, "Invalid request: neither a 'method' nor a response 'id'", text
        )
    return None


def _error(code: int, message: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message, "data": {"received": text[:MAX_QUOTED]}},
    }


class CheckedNdjsonTransport:
    """The SDK's `Transport` protocol (send, receive, close) over a reader and a writer,
    answering malformed lines itself (see the module docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (one writer at a time)."""
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the connection to the client is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next usable message; None at the end of the stream."""
        while True:
            line = await self._read_line()
            if not line:
                return None
            if not line.strip():
                continue
            reply = malformed_reply(line)
            if reply is None:
                message: dict[str, Any] = json.loads(line)
                return message
            await self.send(reply)

    async def close(self) -> None:
        """Stop writing (the client may already be gone)."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(OSError, RuntimeError):
                self._writer.close()

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            try:
                chunks.append(await self._reader.readuntil(b"\n"))
                return b"".join(chunks)
            except asyncio.LimitOverrunError as overrun:
                chunks.append(await self._reader.readexactly(overrun.consumed))
            except asyncio.IncompleteReadError as end:
                chunks.append(end.partial)
                return b"".join(chunks)
