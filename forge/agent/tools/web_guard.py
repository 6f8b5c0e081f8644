"""Where `web_fetch` may go: http(s) URLs to public addresses only, unless allowed.

A model that reads untrusted text can be talked into fetching `http://169.254.169.254/` (a
cloud's metadata service), `http://localhost:8080/admin` or a router's page. So every URL,
the first and each redirect's, is checked before it is requested: the scheme is http or https,
the host is not a literal private address, and every address its name resolves to is public
(not loopback, link-local, private, shared, reserved, multicast or unspecified). With
`tools.web_fetch.allow_private: true` (the loopback servers of the tests) only the scheme is
checked. The same check is made again where the connection is opened
(`GuardedNetworkBackend`), on the address actually connected to. See docs/adr/0055.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx

from forge.agent.tools.base import ToolError

SCHEMES = ("http", "https")
"""The URL schemes `web_fetch` requests."""

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

DestinationCheck = Callable[[str, bool], Awaitable[None]]
"""`check_destination`'s shape: (url, allow_private), raising `ToolError` to refuse."""


def host_of(url: str) -> str:
    """The lower-case host of `url`, without brackets ("" when there is none)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def check_scheme(url: str) -> None:
    """`ToolError` unless `url` is an http(s) URL with a host."""
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise ToolError(f"not a valid URL: {url!r} ({error})") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ToolError(f"web_fetch reads http and https URLs only, not {url!r}")
    if not parts.hostname:
        raise ToolError(f"the URL {url!r} names no host")


def is_public(address: Address) -> bool:
    """Whether `address` is a public, routable unicast address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


async def check_destination(url: str, allow_private: bool) -> None:
    """`ToolError` unless `url` may be requested: its scheme, and with the guard on, every
    address its host is or resolves to."""
    check_scheme(url)
    if allow_private:
        return
    host = host_of(url)
    refuse_private(host, await addresses_of(host, urlsplit(url).port))


def refuse_private(host: str, addresses: list[Address]) -> None:
    """`ToolError` if any of `host`'s `addresses` is not public."""
    for address in addresses:
        if not is_public(address):
            raise ToolError(
                f"refused: {host} is a private, loopback or link-local address ({address}); "
                "web_fetch reaches only public addresses unless tools.web_fetch.allow_private "
                "is true"
            )


async def addresses_of(host: str, port: int | None) -> list[Address]:
    """`host` itself when it is an address literal, else every address its name resolves
    to; `ToolError` when it does not resolve."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        return await _resolve(host, port)


async def _resolve(host: str, port: int | None) -> list[Address]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise ToolError(f"could not resolve {host}: {error}") from None
    addresses: list[Address] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        text = str(sockaddr[0]).split("%", 1)[0]  # an IPv6 scope ("fe80::1%eth0")
        addresses.append(ipaddress.ip_address(text))
    if not addresses:
        raise ToolError(f"could not resolve {host}: no address")
    return addresses


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """The network under `web_fetch`'s HTTP client: it resolves each host itself, refuses a
    non-public address (unless `allow_private`), and connects to the very address it checked.
    So a name that resolves to a public address when checked and to a private one when
    connected (DNS rebinding) still cannot reach the private one. TLS still names the host
    (httpcore takes the server name from the URL, not from the address connected to)."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Connect to the first address of `host`, every address of which passed the guard."""
        addresses = await addresses_of(host, port)
        if not self.allow_private:
            refuse_private(host, addresses)
        return await self._inner.connect_tcp(
            str(addresses[0]), port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Never: `web_fetch` speaks TCP only."""
        raise ToolError("web_fetch does not connect to unix sockets")

    async def sleep(self, seconds: float) -> None:
        """Wait, as the inner backend does."""
        await self._inner.sleep(seconds)


def guarded_transport(allow_private: bool) -> httpx.AsyncHTTPTransport:
    """An httpx transport whose connections go through `GuardedNetworkBackend`."""
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    # httpx 0.28 builds its httpcore pool without a way to pass a network backend; the pool
    # is replaced by an equal one that has ours (httpx is pinned below 0.29; a test covers it).
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=10,
        network_backend=GuardedNetworkBackend(allow_private),
    )
    return transport
