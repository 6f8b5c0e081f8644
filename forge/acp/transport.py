"""Newline-delimited JSON-RPC over byte streams that answers bad input instead of dropping it.

The SDK's own stdio transport logs a line that is not JSON and reads on, so a client that
sent it waits forever. This one answers it as JSON-RPC 2.0 says: a parse error (-32700) for
text that is not JSON, an invalid request (-32600) for JSON that is not a request, a
notification or a response; both with `id: null`, since none could be read. The connection
stays open.

It also honours `$/cancel_request` (ACP's protocol-level cancellation, stable since 2026-06;
the TypeScript SDK sends it whenever a caller aborts a request), which the Python SDK 0.12
does not route: for a `session/prompt` still running it becomes that session's
`session/cancel`, so the prompt answers `cancelled` as ACP asks (a valid response with a
cancellation marker); for any other request it is dropped, since Forge answers those without
waiting on anything the client could cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
from typing import Any

from forge.acp.stdio_files import ByteWriter
from forge.unicode_repair import may_hold_surrogates, repaired_value

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
CANCEL_REQUEST = "$/cancel_request"

MAX_QUOTED = 200
"""Characters of a bad line quoted back in the error's data."""
MAX_DEPTH = 128
"""The deepest nesting of arrays and objects a line may have (ACP's messages need about ten);
deeper lines get a parse error, before any recursive code sees them."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in this JSON text (brackets inside strings do not
    count). Linear, iterative: the strings and everything but brackets are cut out by regular
    expressions, then the brackets are counted."""
    depth = deepest = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def malformed_reply(line: bytes) -> dict[str, Any] | None:
    """The error answer for one received line, or None when the line is a usable message."""
    text = line.decode("utf-8", errors="replace").strip()
    if nesting_depth(text) > MAX_DEPTH:
        return _error(PARSE_ERROR, f"Parse error: nested deeper than {MAX_DEPTH} levels", text)
    try:
        message = json.loads(text)
    except (ValueError, RecursionError) as error:
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
    if method is None and "result" not in message and "error" not in message:
        # An `id` with no method is a request missing its method (a response has a result
        # or an error): answered under its own id, so the client waiting on it hears back.
        reply = _error(INVALID_REQUEST, "Invalid request: no 'method'", text)
        request_id = message["id"]
        if isinstance(request_id, str | int | None) and not isinstance(request_id, bool):
            reply["id"] = request_id
        return reply
    return None


def _error(code: int, message: str, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": code, "message": message, "data": {"received": text[:MAX_QUOTED]}},
    }


class PromptRequests:
    """The `session/prompt` requests not answered yet, by JSON-RPC id, and their sessions:
    what a `$/cancel_request` refers to."""

    def __init__(self) -> None:
        self._sessions: dict[Any, str] = {}

    def received(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The message to hand to the SDK in place of `message` (itself, or a `session/cancel`
        for a cancelled prompt), or None to drop it (a `$/cancel_request` of anything else)."""
        method = message.get("method")
        params = message.get("params")
        if method == "session/prompt" and "id" in message and isinstance(params, dict):
            session_id = params.get("sessionId")
            key = _key(message["id"])
            if isinstance(session_id, str) and key is not None:
                self._sessions[key] = session_id
            return message
        if method != CANCEL_REQUEST or "id" in message:
            return message
        request_id = params.get("requestId") if isinstance(params, dict) else None
        key = _key(request_id)
        session_id = self._sessions.get(key) if key is not None else None
        if session_id is None:
            return None
        return {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}

    def sent(self, message: dict[str, Any]) -> None:
        """Forget a prompt once its response is sent."""
        if "method" not in message and "id" in message:
            self._sessions.pop(_key(message["id"]), None)


def _json_line(message: dict[str, Any]) -> str:
    """`message` as one line of strict JSON. An id JSON cannot hold (a client's `1e999` reads
    as infinity) is answered as `null`, as for a request whose id could not be read."""
    request_id = message.get("id")
    if isinstance(request_id, float) and not math.isfinite(request_id):
        message = {**message, "id": None}
    try:
        return json.dumps(message, separators=(",", ":"), allow_nan=False)
    except ValueError:  # a non-finite number elsewhere: written as null, never as Infinity
        return json.dumps(_finite(message), separators=(",", ":"), allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _key(request_id: Any) -> Any:
    """A request id as a dict key (ids are strings or integers; anything else matches none)."""
    return request_id if isinstance(request_id, str | int) else None


class CheckedNdjsonTransport:
    """The SDK's `Transport` protocol (send, receive, close) over a reader and a writer,
    answering malformed lines itself (see the module docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: ByteWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self._prompts = PromptRequests()

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (one writer at a time); only valid JSON is written."""
        data = (_json_line(message) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the connection to the client is closed")
            self._writer.write(data)
            await self._writer.drain()
        self._prompts.sent(message)

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
                text = line.decode("utf-8", errors="replace")
                parsed = json.loads(text)
                if may_hold_surrogates(text):  # an editor's lone surrogate, repaired here
                    parsed = repaired_value(parsed, "the editor")
                message: dict[str, Any] | None = self._prompts.received(parsed)
                if message is not None:
                    return message
                continue
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
