"""``/mcp`` is built on its first request: a server start does not import the ``mcp`` SDK (about a second of
every ``drivebench serve`` start), and the first MCP request is answered like any later one."""

from __future__ import annotations

import subprocess
import sys

from fastapi.testclient import TestClient

from drivebench.server.api.app import create_app
from drivebench.server.mcp.mount import LazyMCPEndpoint
from drivebench.simulator.backend import Simulator

MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_creating_the_served_app_does_not_import_the_mcp_sdk() -> None:
    """In a fresh interpreter (this one has the SDK loaded): what ``serve`` imports and builds, minus the corpus."""
    code = (
        "import sys\n"
        "import drivebench.cli.main, drivebench.cli.serve, drivebench.server.process\n"
        "from fastapi import FastAPI\n"
        "from drivebench.server.mcp import mount_mcp\n"
        "mount_mcp(FastAPI(), sim=None)\n"
        "loaded = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types')))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_first_mcp_request_builds_the_server_and_is_answered(module_sim: Simulator) -> None:
    app = create_app(module_sim)
    lazy = app.state.mcp
    assert isinstance(lazy, LazyMCPEndpoint) and lazy.server is None  # nothing built before a request
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {module_sim.tokens.eval_token}"}
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.post("/mcp/", json=MCP_INIT, headers=headers)
        assert r.status_code == 200, r.text
        assert "drivebench" in r.text  # the server's name in the initialize result
        assert lazy.server is not None
        first = lazy.server
        unauthenticated = c.post("/mcp/", json=MCP_INIT, headers=MCP_HEADERS)
        assert unauthenticated.status_code == 401  # the SDK's own check, with the RFC 9728 challenge
        assert "resource_metadata=" in unauthenticated.headers["www-authenticate"]
        assert lazy.server is first  # built once
        assert (
            c.post("/mcp/", json=MCP_INIT, headers={**headers, "Host": "localhost:1@evil.example"}).status_code == 421
        )
