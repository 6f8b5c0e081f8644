"""httpx's own transport, made on the first request and in a worker thread (docs/adr/0042).

httpx makes its transport when the client is made: that imports httpcore and builds the TLS
context (loading the CA certificates), together about 0.1 s, the largest part of making a
provider. A provider is made while the app starts, and its first request waits until the
user has typed a task. This transport stands in for the one httpx would have made (the same
defaults: TLS verified against certifi's CAs, `trust_env`, HTTP/1.1, the default limits) and
makes it on the first request, off the event loop (once: requests sent at once share it);
every request then goes through it.
"""

from __future__ import annotations

import asyncio
import threading

import httpx


class DeferredTransport(httpx.AsyncBaseTransport):
    """An `httpx.AsyncHTTPTransport()` made when the first request needs it."""

    def __init__(self) -> None:
        self._transport: httpx.AsyncHTTPTransport | None = None
        self._making = threading.Lock()

    @property
    def made(self) -> bool:
        """Whether the real transport exists (a request has been sent)."""
        return self._transport is not None

    def _make(self) -> httpx.AsyncHTTPTransport:
        # Requests sent at once (the context-window probes) wait here, in their threads,
        # for the one the first of them makes.
        with self._making:
            if self._transport is None:
                self._transport = httpx.AsyncHTTPTransport()
            return self._transport

    async def _made(self) -> httpx.AsyncHTTPTransport:
        if self._transport is not None:
            return self._transport
        return await asyncio.to_thread(self._make)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send `request` through the real transport, made first if needed."""
        transport = await self._made()
        return await transport.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the real transport, if it was made."""
        if self._transport is not None:
            await self._transport.aclose()
