"""The plumbing every loopback test server shares (`openai_server.OpenAIServer`,
`anthropic_server.AnthropicServer`): a Starlette app served by uvicorn in a background thread
on a free 127.0.0.1 port, a queue of scripted replies (then the `responder`, then a default),
the requests recorded in order, and replayed bodies sent byte for byte.

A server says what is its own: its routes (`_routes`), the reply when nothing is scripted
(`_default_reply`) and, if it keeps more than the one queue, where a request's reply is taken
from (`_take_queued`).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import ClassVar, Generic, Protocol, Self, TypeVar

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

ReplyT = TypeVar("ReplyT")
RecordT = TypeVar("RecordT")


class RawBody(Protocol):
    """Bytes to send unchanged (`openai_server.Raw`)."""

    body: bytes
    status: int
    content_type: str
    split_every: int | None
    headers: dict[str, str]


def lowered_headers(request: Request) -> dict[str, str]:
    """The request's headers with lower-case names (as recorded)."""
    return {k.lower(): v for k, v in request.headers.items()}


def text_pieces(text: str, size: int) -> list[str]:
    """`text` in pieces of `size` characters (none for an empty text)."""
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def raw_response(reply: RawBody, stream: Callable[[list[bytes]], AsyncIterator[bytes]]) -> Response:
    """`reply`'s bytes as they are: a whole body, or for an event stream the pieces of
    `split_every` bytes that `stream` sends. The content type goes in as a header so it is
    sent exactly (a media type would gain a charset)."""
    headers = {"content-type": reply.content_type, **reply.headers}
    if "text/event-stream" not in reply.content_type.lower():
        return Response(reply.body, status_code=reply.status, headers=headers)
    size = reply.split_every or len(reply.body) or 1
    pieces = [reply.body[i : i + size] for i in range(0, len(reply.body), size)]
    return StreamingResponse(stream(pieces), status_code=reply.status, headers=headers)


class LoopbackServer(Generic[ReplyT, RecordT]):
    """A scriptable HTTP server on 127.0.0.1. Use `start()`/`stop()` (or a pytest fixture)."""

    label: ClassVar[str] = "loopback"
    """Names the server in the error when it does not start."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[ReplyT] = deque()
        self.responder: Callable[[RecordT], ReplyT] | None = None
        """Answers when the queue is empty (else the server's default reply)."""
        self.requests: list[RecordT] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # --- what a server defines ---------------------------------------------------------------
    def _routes(self) -> list[Route]:
        raise NotImplementedError

    def _default_reply(self) -> ReplyT:
        raise NotImplementedError

    def _take_queued(self, record: RecordT) -> ReplyT | None:
        """The queued reply for this request, if any (called holding the lock)."""
        return self._queue.popleft() if self._queue else None

    # --- scripting ---------------------------------------------------------------------------
    def enqueue(self, *replies: ReplyT) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def reset(self) -> None:
        """Forget queued replies, recorded requests and the responder."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.responder = None

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    # --- serving -----------------------------------------------------------------------------
    def _record(self, record: RecordT) -> None:
        with self._lock:
            self.requests.append(record)

    def _next_reply(self, record: RecordT) -> ReplyT:
        with self._lock:
            queued = self._take_queued(record)
        if queued is not None:
            return queued
        if self.responder is not None:
            return self.responder(record)
        return self._default_reply()

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self) -> Self:
        """Start on a free loopback port; returns when it accepts connections."""
        # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose
        # protocol says TCP, and with Nagle on every answer on a kept-alive connection waits
        # ~40 ms for the client's delayed ACK (docs/adr/0052).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        app = Starlette(routes=self._routes())
        config = uvicorn.Config(app, log_level="critical", lifespan="off", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError(f"test {self.label} server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop the server and wait for its thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
