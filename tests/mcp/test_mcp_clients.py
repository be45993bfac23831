"""MCP for real clients: the client configurations of docs/mcp.md run with the official SDK client
(stdio through ``stdio_client`` against ``drivebench mcp``, streamable HTTP with a bearer token against a real
uvicorn server), the allowed-host option, and the RFC 9728 protected-resource metadata."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from drivebench.cli.serve import set_mcp_allowed_hosts
from drivebench.server.api import create_app
from drivebench.server.mcp.server import ALLOWED_HOSTS_ENV
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator
from drivebench.testing import ServedSimulator
from tests.support.clirun import BIN, clean_env
from tests.support.docs import code_blocks, page_text
from tests.support.http import bearer

PAGE = "mcp.md"  # the MCP clients page of docs/
QUERY = "项目X的技术方案审批人"
TOOLS = {"recall", "answer", "get_document", "list_versions"}


def _client_configs() -> list[dict[str, Any]]:
    """Every ```json block of the client configurations, parsed."""
    return [json.loads(b) for b in code_blocks(PAGE, "Client configurations", "json")]


def _servers(config: dict[str, Any]) -> dict[str, Any]:
    return config.get("mcpServers") or config["servers"]


async def _exercise(client: Client) -> dict[str, Any]:
    tools = {t.name for t in (await client.list_tools()).tools}
    assert tools == TOOLS
    result = await client.call_tool("recall", {"query": QUERY, "top_k": 3})
    assert not result.is_error, result.content
    return dict(result.structured_content or {})


def test_docs_have_stdio_and_http_snippets() -> None:
    configs = _client_configs()
    kinds = [("command" in s, s.get("type")) for c in configs for s in _servers(c).values()]
    assert (True, None) in kinds and (True, "stdio") in kinds and (False, "http") in kinds
    text = page_text(PAGE)
    for needle in ("--mcp-allowed-host", ALLOWED_HOSTS_ENV, "oauth-protected-resource", "drivebench mcp --corpus"):
        assert needle in text


@pytest.mark.slow
@pytest.mark.e2e
def test_docs_stdio_configs_run_with_the_sdk_stdio_client() -> None:
    """``drivebench mcp`` as the docs configure it, started by the SDK's stdio client. The environment picks the
    documented test embedder and bm25 (the MCP wiring is under test, not the model)."""
    env = clean_env(DRIVEBENCH_MCP_EMBEDDER="hash", DRIVEBENCH_MCP_PIPELINE="bm25")
    stdio = [s for c in _client_configs() for s in _servers(c).values() if "command" in s]
    assert len(stdio) >= 2

    async def go(server: dict[str, Any]) -> dict[str, Any]:
        command = server["command"]
        if command == "drivebench":
            command = str(BIN / "drivebench")  # the client's PATH would find this one
        params = StdioServerParameters(command=command, args=server["args"], env=env)
        async with Client(stdio_client(params)) as client:
            return await _exercise(client)

    outs = [asyncio.run(go(s)) for s in stdio]
    for out in outs:  # --user u001 in the snippets: the call acts as u001, no impersonation needed
        assert out["principal"]["user_id"] == "u001" and 0 < len(out["results"]) <= 3
    assert outs[0]["results"] == outs[1]["results"]


@pytest.mark.e2e
def test_docs_http_config_runs_with_the_sdk_streamable_http_client(drivebench_server: ServedSimulator) -> None:
    sim = drivebench_server.sim
    token = sim.tokens.for_subject("u001").token
    http = [s for c in _client_configs() for s in _servers(c).values() if s.get("type") == "http"]
    assert http

    async def go(server: dict[str, Any]) -> dict[str, Any]:
        url = server["url"].replace("http://127.0.0.1:8000", drivebench_server.url)
        headers = {k: v.replace("YOUR_TOKEN", token) for k, v in server["headers"].items()}
        async with (
            create_mcp_http_client(headers=headers) as client_http,
            Client(streamable_http_client(url, http_client=client_http)) as client,
        ):
            return await _exercise(client)

    for server in http:
        out = asyncio.run(go(server))
        assert out["principal"]["user_id"] == "u001" and out["results"]


def test_unauthenticated_mcp_request_points_to_rfc9728_metadata(sim: Simulator) -> None:
    with TestClient(create_app(sim), base_url="http://127.0.0.1:8123") as c:
        init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        r = c.post("/mcp/", json=init, headers={"Accept": "application/json, text/event-stream"})
        assert r.status_code == 401
        challenge = r.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge
        url = "http://127.0.0.1:8123/.well-known/oauth-protected-resource/mcp"
        assert f'resource_metadata="{url}"' in challenge
        meta = c.get(url).json()
        assert meta["resource"] == "http://127.0.0.1:8123/mcp"
        assert meta["bearer_methods_supported"] == ["header"]
        assert "recall" in meta["scopes_supported"] and "authorization_servers" not in meta
        assert c.get("/.well-known/oauth-protected-resource").json() == meta
        # a token is accepted: no challenge (the endpoint answers the protocol, not 401)
        r = c.post(
            "/mcp/",
            json=init,
            headers={"Accept": "application/json, text/event-stream", **bearer(sim.tokens.eval_token)},
        )
        assert r.status_code != 401 and "www-authenticate" not in r.headers
        # a hostile Host header is not reflected into the challenge
        r = c.post("/mcp/", json=init, headers={"Host": 'evil"x', "Accept": "application/json"})
        assert 'evil"x' not in r.headers.get("www-authenticate", "")


def test_mcp_allowed_host_option_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ALLOWED_HOSTS_ENV, "")  # restored after the test
    assert set_mcp_allowed_hosts([], "127.0.0.1") == []
    monkeypatch.setenv(ALLOWED_HOSTS_ENV, "drive.lan, proxy")
    hosts = set_mcp_allowed_hosts(["drive.example.com,other"], "0.0.0.0")
    assert hosts == ["drive.example.com", "other", "drive.lan", "proxy"]
    import os

    assert os.environ[ALLOWED_HOSTS_ENV] == "drive.example.com,other,drive.lan,proxy"
    assert set_mcp_allowed_hosts([], "myhost")[-1] == "myhost"


@pytest.mark.e2e
def test_allowed_host_reaches_mcp_over_real_http(sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that reaches the server under another name: 421 until the name is allowed."""
    monkeypatch.setenv(ALLOWED_HOSTS_ENV, "")  # restored after the test
    token = sim.tokens.for_subject("u001").token

    async def go(url: str, host: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}", "Host": host}
        async with (
            create_mcp_http_client(headers=headers) as client_http,
            Client(streamable_http_client(url, http_client=client_http)) as client,
        ):
            return await _exercise(client)

    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {token}"}
    with start_in_thread(sim) as server:
        r = httpx.post(server.url + "/mcp/", json=init, headers={**accept, "Host": "drive.example.com"})
        assert r.status_code == 421
    assert set_mcp_allowed_hosts(["drive.example.com"], "127.0.0.1") == ["drive.example.com"]
    with start_in_thread(sim) as server:
        out = asyncio.run(go(server.url + "/mcp/", f"drive.example.com:{server.port}"))
    assert out["principal"]["user_id"] == "u001"


def test_documented_command_lines_match_the_help() -> None:
    from typer.testing import CliRunner

    from drivebench.cli.main import app

    text = page_text("commands.md")  # the synopsis
    assert "drivebench mcp [--corpus X] [--user USER_ID]" in text and "[--mcp-allowed-host NAME ...]" in text
    mcp_help = CliRunner().invoke(app, ["mcp", "--help"], env={"COLUMNS": "200"})
    assert mcp_help.exit_code == 0 and "--corpus" in mcp_help.output and "--user" in mcp_help.output
    serve_help = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    assert "--mcp-allowed-host" in serve_help.output and ALLOWED_HOSTS_ENV in serve_help.output
