"""The MCP server: the SDK's own client, in-process and over a real uvicorn server, with bearer tokens."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from drivebench.formats.evalset import EvalQuery
from drivebench.server.api import create_app
from drivebench.server.mcp import build_mcp_server
from drivebench.simulator.backend import Simulator
from drivebench.testing import ServedSimulator
from tests.support.decisions import previewable_docs
from tests.support.http import bearer

QUERY = "项目X的技术方案审批人"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def _with_http(url: str, token: str | None, fn: Callable[[Client], Awaitable[Any]]) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as c,
    ):
        return await fn(c)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


# ---------------------------------------------------------------------- in-process


def test_tools_and_resources_are_listed(sim: Simulator) -> None:
    async def go() -> None:
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == {"recall", "answer", "get_document", "list_versions"}
            props = tools["recall"].input_schema["properties"]
            assert {"query", "top_k", "user_id", "user_role", "department", "as_of", "file_types"} <= set(props)
            assert "citation_style" in tools["answer"].input_schema["properties"]
            templates = (await c.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["drive://documents/{doc_id}"]

    run(go())


def test_recall_tool_equals_the_http_endpoint(sim: Simulator, client: TestClient) -> None:
    body = {"query": QUERY, "user_id": "u001", "top_k": 5}
    http = client.post("/api/mcp/recall", json=body, headers=bearer(sim.tokens.eval_token)).json()

    async def go() -> dict[str, Any]:
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            result = await c.call_tool("recall", body)
            assert not result.is_error, _text(result)
            assert json.loads(_text(result)) == result.structured_content
            return dict(result.structured_content)

    got = run(go())
    assert got["results"] == http["results"] and got["principal"] == http["principal"]
    assert got["snapshot"] == http["snapshot"]


def test_answer_tool_equals_the_http_endpoint(sim: Simulator, client: TestClient) -> None:
    body = {"query": QUERY, "user_id": "u001", "top_k": 5, "citation_style": "ids"}
    http = client.post("/api/mcp/answer", json=body, headers=bearer(sim.tokens.eval_token)).json()

    async def go() -> dict[str, Any]:
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            return dict((await c.call_tool("answer", body)).structured_content)

    got = run(go())
    assert got["answer"] == http["answer"] and got["citations"] == http["citations"]
    assert "[[d0015]]" in got["answer"]


def test_evaluate_as_rules_are_the_http_rules(sim: Simulator) -> None:
    """User token: itself only. Service token: must name a principal. Same errors as HTTP (403/400/422)."""
    user = sim.tokens.for_subject("u001").token

    async def go() -> None:
        async with Client(build_mcp_server(sim, token=user)) as c:
            ok = await c.call_tool("recall", {"query": QUERY, "top_k": 3})
            assert ok.structured_content["principal"]["user_id"] == "u001"
            assert ok.structured_content["principal"]["evaluated_as"] is False
            other = await c.call_tool("recall", {"query": QUERY, "user_id": "u004"})
            assert other.is_error and "(403)" in _text(other)
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            nobody = await c.call_tool("recall", {"query": QUERY})
            assert nobody.is_error and "(400)" in _text(nobody)
            bad = await c.call_tool("recall", {"query": QUERY, "user_id": "u001", "top_k": 0})
            assert bad.is_error and "(422)" in _text(bad)
            role = await c.call_tool("recall", {"query": QUERY, "user_role": "engineer", "department": "rd"})
            assert role.structured_content["principal"]["evaluated_as"] is True
            bad_filter = await c.call_tool("recall", {"query": QUERY, "user_id": "u001", "file_types": ["exe"]})
            assert bad_filter.is_error and "(400)" in _text(bad_filter)
        async with Client(build_mcp_server(sim)) as c:  # in-process without a token
            anon = await c.call_tool("recall", {"query": QUERY, "user_id": "u001"})
            assert anon.is_error and "(401)" in _text(anon)

    audit_before = len(sim.audit)
    run(go())
    assert len(sim.audit) > audit_before  # evaluate-as calls are audited, as over HTTP


def test_documents_and_versions_respect_permissions(sim: Simulator) -> None:
    async def go() -> None:
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            doc = await c.call_tool("get_document", {"doc_id": "d0014", "user_id": "u001"})
            assert not doc.is_error, _text(doc)
            assert doc.structured_content["version_id"] == "d0014-v2" and "王芳" in doc.structured_content["text"]
            old = await c.call_tool("get_document", {"doc_id": "d0014", "user_id": "u001", "version_id": "d0014-v1"})
            assert old.structured_content["version"] == 1
            versions = await c.call_tool("list_versions", {"doc_id": "d0014", "user_id": "u001"})
            rows = versions.structured_content["versions"]
            assert [v["version_id"] for v in rows] == ["d0014-v1", "d0014-v2"] and rows[-1]["current"]
            # a secret HR document: the same 404 as for a document that does not exist
            denied = await c.call_tool("get_document", {"doc_id": "d0023", "user_id": "u001"})
            missing = await c.call_tool("get_document", {"doc_id": "nope", "user_id": "u001"})
            assert denied.is_error and missing.is_error and "(404)" in _text(denied)
            assert _text(denied).replace("d0023", "X") == _text(missing).replace("nope", "X")
            hidden = await c.call_tool("list_versions", {"doc_id": "d0023", "user_id": "u001"})
            assert hidden.is_error and "(404)" in _text(hidden)

    run(go())


def test_resources_list_and_read_as_the_token_user(sim: Simulator) -> None:
    user = sim.tokens.for_subject("u001").token
    engine = sim.engine
    visible = previewable_docs(engine, "u001", sim.drive.clock.now())
    visible = {d for d in visible if sim.drive.documents[d].trashed_at is None}

    async def go() -> None:
        async with Client(build_mcp_server(sim, token=user)) as c:
            listed = {str(r.uri).rsplit("/", 1)[-1] for r in (await c.list_resources()).resources}
            assert listed == visible and "d0023" not in listed
            text = (await c.read_resource("drive://documents/d0014")).contents[0].text
            assert "王芳" in text
            with pytest.raises(MCPError, match="404"):
                await c.read_resource("drive://documents/d0023")
        async with Client(build_mcp_server(sim, token=sim.tokens.eval_token)) as c:
            assert (await c.list_resources()).resources == []  # a service token has no documents of its own
            with pytest.raises(MCPError, match="403"):
                await c.read_resource("drive://documents/d0014")

    run(go())


# ---------------------------------------------------------------------- over HTTP (the mounted app)


def test_mounted_app_requires_a_bearer_token_and_checks_the_host(sim: Simulator) -> None:
    with TestClient(create_app(sim), base_url="http://127.0.0.1") as c:
        init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        accept = {"Accept": "application/json, text/event-stream"}
        r = c.post("/mcp/", json=init, headers=accept)
        assert r.status_code == 401 and "Bearer" in r.headers.get("www-authenticate", "")
        r = c.post("/mcp/", json=init, headers={**accept, **bearer("dbu_wrong")})
        assert r.status_code == 401
        assert c.post("/mcp", json=init, headers=accept, follow_redirects=False).status_code == 307
        assert c.get("/healthz").status_code == 200  # the rest of the app is untouched by the mount
    with TestClient(create_app(sim)) as c:  # Host: testserver is not an allowed host (DNS rebinding)
        r = c.post(
            "/mcp/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=bearer(sim.tokens.eval_token)
        )
        assert r.status_code == 421


@pytest.mark.e2e
def test_real_http_with_each_kind_of_token(drivebench_server: ServedSimulator) -> None:
    sim, url = drivebench_server.sim, drivebench_server.url + "/mcp/"

    async def as_user(c: Client) -> Any:
        r = await c.call_tool("recall", {"query": QUERY, "top_k": 3})
        other = await c.call_tool("recall", {"query": QUERY, "user_id": "u002"})
        listed = (await c.list_resources()).resources
        return r.structured_content, other, listed

    mine, other, listed = run(_with_http(url, sim.tokens.for_subject("u001").token, as_user))
    assert mine["principal"]["user_id"] == "u001" and len(mine["results"]) == 3
    assert other.is_error and "(403)" in _text(other)
    assert listed and all(str(r.uri).startswith("drive://documents/") for r in listed)

    async def as_evaluator(c: Client) -> Any:
        return (
            await c.call_tool("answer", {"query": QUERY, "user_id": "u001", "citation_style": "brackets"})
        ).structured_content

    answered = run(_with_http(url, sim.tokens.eval_token, as_evaluator))
    assert answered["principal"]["caller"] == "svc:evaluator" and answered["citations"]

    with pytest.raises(BaseExceptionGroup) as info:  # no token: the SDK client cannot even connect
        run(_with_http(url, None, as_evaluator))
    assert info.group_contains(MCPError)
    r = httpx.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 401


@pytest.mark.e2e
def test_mcp_target_matches_the_http_target(drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery]) -> None:
    """The evaluator's MCP target (over HTTP and in-process) scores exactly like its HTTP target."""
    from drivebench.evaluator.evaluate import evaluate
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.targets.http import HttpTarget
    from drivebench.evaluator.targets.mcp import McpTarget

    sim = drivebench_server.sim
    queries = seed_evalset[:20]
    cfg = RunConfig(top_k=10, concurrency=4, mode="answer")
    token = sim.tokens.eval_token
    results = [
        evaluate(t, queries, ks=(1, 10), run_config=cfg)
        for t in (
            HttpTarget(drivebench_server.url, token),
            McpTarget(drivebench_server.url + "/mcp/", token),
            McpTarget(build_mcp_server(sim, token=token)),
        )
    ]
    ranked = [[(r.query_id, [h.doc_id for h in r.results], r.answer) for r in ev.records] for ev in results]
    assert ranked[0] == ranked[1] == ranked[2]
    assert all(r.error is None for ev in results for r in ev.records)
    assert results[1].result["metrics"]["hit_rate@10"] == results[0].result["metrics"]["hit_rate@10"]


def test_mcp_tools_apply_request_faults_and_the_target_retries(
    sim: Simulator, seed_evalset: list[EvalQuery], drivebench_faults: Any
) -> None:
    """errors/throttle reach MCP tool calls as tool errors carrying the status; the MCP target retries them."""
    from drivebench.evaluator.evaluate import evaluate
    from drivebench.evaluator.runner import RunConfig
    from drivebench.evaluator.targets.mcp import McpTarget

    drivebench_faults.enable("throttle", share=0.5, retry_after_s=0.01)
    before = drivebench_faults.injected["throttle"]
    cfg = RunConfig(top_k=5, concurrency=4, attempts=5, backoff_base=0.01)
    ev = evaluate(
        McpTarget(build_mcp_server(sim, token=sim.tokens.eval_token)), seed_evalset[:12], ks=(5,), run_config=cfg
    )
    retries = sum(int((r.model_extra or {}).get("retries") or 0) for r in ev.records)
    errors = sum(1 for r in ev.records if r.error is not None)
    assert retries > 0 and retries + errors == drivebench_faults.injected["throttle"] - before
    assert all("429" in (r.error or "429") for r in ev.records)
