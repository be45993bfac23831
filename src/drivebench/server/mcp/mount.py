"""``/mcp`` on the app, built on its first request.

Importing the ``mcp`` SDK and building the server (``server.DriveMCPServer``) costs about a second of CPU, a
quarter of a ``drivebench serve`` start, and most servers never see an MCP client. So ``mount_mcp`` mounts a
stand-in that imports and builds the real endpoint when the first ``/mcp`` request arrives (that request waits
for it, later ones do not), and starts the SDK's session manager then, in a task of the app's lifespan so that
it stops with the app. The Host check (``hosts.StrictHostCheck``) and the RFC 9728 metadata (``oauth``) need no
SDK: they answer from the start.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from fastapi import FastAPI
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from drivebench.server.mcp.hosts import HostRules, StrictHostCheck
from drivebench.server.mcp.oauth import add_metadata_routes

if TYPE_CHECKING:
    from drivebench.server.mcp.server import DriveMCPServer
    from drivebench.simulator.backend import Simulator

LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
ALLOWED_HOSTS_ENV = "DRIVEBENCH_MCP_ALLOWED_HOSTS"


def allowed_hosts_from_env() -> list[str]:
    """``DRIVEBENCH_MCP_ALLOWED_HOSTS``: comma-separated host names (``drivebench serve --mcp-allowed-host``)."""
    return [h.strip() for h in os.environ.get(ALLOWED_HOSTS_ENV, "").split(",") if h.strip()]


class LazyMCPEndpoint:
    """The ASGI app at ``/mcp``: the SDK's streamable HTTP app, built and started on the first request."""

    def __init__(self, sim: Simulator, hosts: list[str], any_host: bool) -> None:
        self.sim = sim
        self.hosts = hosts
        self.any_host = any_host
        self.server: DriveMCPServer | None = None
        self._app: ASGIApp | None = None
        self._tasks: TaskGroup | None = None  # the lifespan's, while the app runs
        self._lock: anyio.Lock | None = None

    def _build(self) -> tuple[DriveMCPServer, ASGIApp]:
        """The server and its endpoint, as ``mount_mcp`` mounted them before it was lazy (imports the SDK)."""
        from mcp.server.transport_security import TransportSecuritySettings

        from drivebench.server.mcp.oauth import ChallengeWithMetadata
        from drivebench.server.mcp.server import build_mcp_server

        server = build_mcp_server(self.sim)
        hosts = self.hosts
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=not self.any_host,  # "*": any Host (behind a trusted proxy only)
            allowed_hosts=[f"{h}:*" for h in hosts] + list(hosts),
            allowed_origins=[f"{scheme}://{h}:*" for h in hosts for scheme in ("http", "https")]
            + [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
        )
        mcp_app = server.streamable_http_app(streamable_http_path="/", transport_security=security)
        return server, ChallengeWithMetadata(mcp_app)  # a 401 names the metadata (RFC 9728 §5.1)

    async def _run_sessions(self, server: DriveMCPServer, *, task_status: TaskStatus[None]) -> None:
        async with server.session_manager.run():
            task_status.started()
            await anyio.sleep_forever()  # until the lifespan ends (its task group is cancelled)

    async def _started(self) -> ASGIApp | None:
        """The endpoint, built and its session manager running; None outside the app's lifespan."""
        if self._app is not None:
            return self._app
        if self._tasks is None or self._lock is None:
            return None
        async with self._lock:
            if self._app is None:
                server, app = await anyio.to_thread.run_sync(self._build)  # the import does not stall the loop
                await self._tasks.start(self._run_sessions, server)
                self.server, self._app = server, app
        return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = await self._started()
        if app is None:  # the SDK's session manager needs a running lifespan, as before the endpoint was lazy
            response = JSONResponse(
                {"error": {"code": "unavailable", "message": "the MCP endpoint runs within the app's lifespan"}},
                status_code=503,
            )
            await response(scope, receive, send)
            return
        await app(scope, receive, send)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """For the app's lifespan: a task group the session manager can run in once it is started."""
        async with anyio.create_task_group() as tasks:
            self._tasks, self._lock = tasks, anyio.Lock()
            try:
                yield
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()


def mount_mcp(app: FastAPI, sim: Simulator, *, allowed_hosts: list[str] | None = None) -> LazyMCPEndpoint:
    """Mount the MCP server at ``/mcp`` (``/mcp/`` is the endpoint), built on its first request, its session
    manager running in the app's lifespan (wrapping any lifespan the app already has). ``allowed_hosts``: extra
    host names the DNS-rebinding check accepts besides 127.0.0.1, localhost and [::1] (any port; ``*`` turns the
    check off); default: the comma-separated ``DRIVEBENCH_MCP_ALLOWED_HOSTS`` (``drivebench serve
    --mcp-allowed-host``). Also serves the RFC 9728 metadata (``oauth``)."""
    if allowed_hosts is None:
        allowed_hosts = allowed_hosts_from_env()
    hosts = [*LOCAL_HOSTS, *(h for h in allowed_hosts if h != "*")]
    lazy = LazyMCPEndpoint(sim, hosts, any_host="*" in allowed_hosts)
    add_metadata_routes(app)  # RFC 9728 metadata at /.well-known/oauth-protected-resource[/mcp]
    endpoint: Any = lazy
    if not lazy.any_host:  # the SDK's check passes "localhost:1@evil.example"
        endpoint = StrictHostCheck(endpoint, HostRules(hosts))
    app.mount("/mcp", endpoint)
    previous = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with lazy.running(), previous(a) as state:
            yield state

    app.router.lifespan_context = lifespan
    app.state.mcp = lazy
    return lazy
