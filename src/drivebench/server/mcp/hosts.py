"""The MCP endpoint's DNS-rebinding check, strict: ``Host`` (and ``Origin``, when sent) must name an allowed host
exactly.

The SDK's own check (``TransportSecuritySettings``, still on behind this one) accepts ``<name>:*`` as "any header
that starts with ``<name>:``", so ``Host: localhost:1@evil.example`` passed as ``localhost`` with a port. Here a
header is parsed as ``host[:port]`` (a DNS name, an IPv4 address or a bracketed IPv6 address; the port digits
only), and the host compared whole, case-insensitively, with the allowed names: no userinfo, no path, no
suffix (``localhost.evil.example``, ``127.0.0.1.nip.io``). An allowed entry ``name`` accepts any port,
``name:port`` that port only. The refusals are the SDK's own: 421 for the Host, 403 for the Origin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

_AUTHORITY = re.compile(r"(?P<host>\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::(?P<port>[0-9]{1,5}))?")
_ORIGIN = re.compile(r"(?P<scheme>https?)://(?P<authority>[^/?#]*)")


def split_authority(value: str) -> tuple[str, str | None] | None:
    """``(host, port)`` of a ``Host`` header value (host lower-cased), or None when it is not exactly that."""
    m = _AUTHORITY.fullmatch(value.strip().lower())
    if m is None:
        return None
    port = m.group("port")
    if port is not None and not 0 < int(port) < 65536:
        return None
    return m.group("host"), port


class HostRules:
    """Allowed hosts: ``name`` (any port) or ``name:port``; IPv6 addresses bracketed (``[::1]``)."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self.any_port: set[str] = set()
        self.with_port: set[tuple[str, str]] = set()
        for entry in allowed:
            if entry.count(":") > 1 and not entry.startswith("["):  # a bare IPv6 address (serve --host ::1)
                entry = f"[{entry}]"
            parts = split_authority(entry)
            if parts is None:
                raise ValueError(f"not a host name or host:port: {entry!r}")
            host, port = parts
            if port is None:
                self.any_port.add(host)
            else:
                self.with_port.add((host, port))

    def host_ok(self, value: str | None) -> bool:
        parts = split_authority(value) if value else None
        if parts is None:
            return False
        host, port = parts
        return host in self.any_port or (port is not None and (host, port) in self.with_port)

    def origin_ok(self, value: str | None) -> bool:
        if value is None:  # a same-origin request, or not a browser
            return True
        m = _ORIGIN.fullmatch(value.strip().lower())
        return m is not None and self.host_ok(m.group("authority"))


class StrictHostCheck:
    """ASGI wrapper of the MCP app: refuses a request whose Host or Origin is not allowed (``HostRules``)."""

    def __init__(self, app: ASGIApp, rules: HostRules) -> None:
        self.app, self.rules = app, rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            if not self.rules.host_ok(headers.get("host")):
                await Response("Invalid Host header", status_code=421)(scope, receive, send)
                return
            if not self.rules.origin_ok(headers.get("origin")):
                await Response("Invalid Origin header", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
