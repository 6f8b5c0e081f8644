"""Where `web_fetch` may go: http(s) URLs to public addresses only, unless allowed.

A model that reads untrusted text can be talked into fetching `http://169.254.169.254/` (a
cloud's metadata service), `http://localhost:8080/admin` or a router's page. So every URL,
the first and each redirect's, is checked before it is requested: the scheme is http or https,
the host is not a literal private address, and every address its name resolves to is public
(not loopback, link-local, private, shared, reserved, multicast or unspecified). With
`tools.web_fetch.allow_private: true` (the loopback servers of the tests) only the scheme is
checked. See docs/adr/0055.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

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
    try:
        literal: Address | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        addresses = await _resolve(host, urlsplit(url).port)
    for address in addresses:
        if not is_public(address):
            raise ToolError(
                f"refused: {host} is a private, loopback or link-local address ({address}); "
                "web_fetch reaches only public addresses unless tools.web_fetch.allow_private "
                "is true"
            )


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
