"""OAuth 2.0 Protected Resource Metadata (RFC 9728) for the MCP endpoint, and the ``WWW-Authenticate``
challenge that points to it.

The simulator is a resource server whose bearer tokens are issued ahead of time (``drivebench tokens``
prints them; they derive from the server's token secret). There is no authorization server to send a
client to, so the metadata leaves ``authorization_servers`` out (optional in RFC 9728 §2) and says how
the token is presented (``bearer_methods_supported: ["header"]``) and which scopes exist. A client is
configured with ``Authorization: Bearer <token>`` (docs/mcp.md).

Served at ``/.well-known/oauth-protected-resource/mcp`` (RFC 9728 §3.1: the well-known segment inserted
before the resource path ``/mcp``) and, for clients that only look at the root, at
``/.well-known/oauth-protected-resource``. A 401 from ``/mcp/`` carries
``WWW-Authenticate: Bearer error="invalid_token", ..., resource_metadata="<that URL>"`` (RFC 9728 §5.1).
URLs are built from the request's scheme and ``Host`` (characters outside a host name are refused).
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import FastAPI, Request
from starlette.types import ASGIApp, Receive, Scope, Send

METADATA_PATH = "/.well-known/oauth-protected-resource"
RESOURCE_PATH = "/mcp"
SCOPES = ["recall", "evaluate-as", "admin"]
_HOST = re.compile(r"^[A-Za-z0-9.\-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$")


def _base_url(scope: Scope) -> str:
    """``scheme://host[:port]`` of a request; the server's own address when ``Host`` is missing or odd."""
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    if not _HOST.match(host):
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}"


def resource_metadata(base_url: str) -> dict[str, Any]:
    """The RFC 9728 document for the MCP endpoint under ``base_url``."""
    return {
        "resource": base_url + RESOURCE_PATH,
        "bearer_methods_supported": ["header"],
        "scopes_supported": SCOPES,
        "resource_name": "drivebench simulator MCP endpoint",
        "resource_documentation": base_url + "/docs",
        # not in RFC 9728's registry (allowed by §2): where a person gets a token
        "token_issuance": "tokens are issued ahead of time: `drivebench tokens --corpus NAME` prints them",
    }


def metadata_url(base_url: str) -> str:
    return base_url + METADATA_PATH + RESOURCE_PATH


def add_metadata_routes(app: FastAPI) -> None:
    async def metadata(request: Request) -> dict[str, Any]:
        return resource_metadata(_base_url(request.scope))

    for path in (METADATA_PATH + RESOURCE_PATH, METADATA_PATH):
        app.add_api_route(
            path,
            metadata,
            methods=["GET"],
            tags=["mcp"],
            summary="OAuth protected-resource metadata (RFC 9728) of the MCP endpoint",
            include_in_schema=False,
        )


class ChallengeWithMetadata:
    """ASGI wrapper of the MCP app: adds ``resource_metadata="..."`` to the ``WWW-Authenticate`` of a 401."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        url = metadata_url(_base_url(scope))

        async def wrapped(message: Any) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 401:
                headers = []
                found = False
                for key, value in message.get("headers", []):
                    if key.lower() == b"www-authenticate":
                        found = True
                        if b"resource_metadata=" not in value:
                            value = value + f', resource_metadata="{url}"'.encode()
                    headers.append((key, value))
                if not found:
                    headers.append((b"www-authenticate", f'Bearer resource_metadata="{url}"'.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, wrapped)
