"""``recall.RecallFastPath`` answers exactly like the FastAPI route it bypasses.

Two apps over the one session simulator: ``create_app(sim)`` (``POST /api/mcp/recall`` through the fast path) and
``create_app(sim, recall_fast_path=False)`` (through Starlette's routing and FastAPI's request handler). Every
request of a matrix (valid, curl-style, malformed, oversized, unauthenticated, impersonating, fault-injected,
unappliable filters, a failed permission check, an unhandled error) gets the same status, headers and body bytes
from both; and the fast path is shown to be the one that served (a spy on the endpoint it calls by name).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drivebench.server.api import create_app
from drivebench.server.api import recall as recall_api
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import parse_fault_specs
from drivebench.testing import ServedSimulator
from tests.support.http import bearer

URL = recall_api.RECALL_PATH
QUERY = "项目X的技术方案审批人"
Case = tuple[str, dict[str, Any]]  # (name, httpx request keywords)


@pytest.fixture(scope="module")
def clients(sim: Simulator) -> Iterator[tuple[TestClient, TestClient]]:
    fast = TestClient(create_app(sim), raise_server_exceptions=False)
    routed = TestClient(create_app(sim, recall_fast_path=False), raise_server_exceptions=False)
    yield fast, routed
    fast.close()
    routed.close()


def _users(sim: Simulator) -> tuple[str, str]:
    a, b = sorted(sim.drive.users)[:2]
    return a, b


def _cases(sim: Simulator) -> list[Case]:
    a, b = _users(sim)
    ev = bearer(sim.tokens.eval_token)
    me = bearer(sim.tokens.for_subject(a).token)
    body = {"query": QUERY, "top_k": 5, "user_id": a}
    deep: Any = "x"
    for _ in range(40):
        deep = {"a": deep}
    return [
        ("eval token as a user", {"json": body, "headers": ev}),
        ("user token as itself", {"json": {"query": QUERY, "top_k": 3}, "headers": me}),
        ("unknown fields are warnings", {"json": {**body, "colour": "red", "x": 1}, "headers": ev}),
        ("role principal", {"json": {"query": QUERY, "user_role": sorted(sim.drive.roles)[0]}, "headers": ev}),
        ("past as_of (threadpool)", {"json": {**body, "as_of": "2020-01-01T00:00:00Z"}, "headers": ev}),
        ("future as_of", {"json": {**body, "as_of": "2999-01-01T00:00:00Z"}, "headers": ev}),
        (
            "curl: form content type",
            {
                "content": json.dumps(body).encode(),
                "headers": {**ev, "Content-Type": "application/x-www-form-urlencoded"},
            },
        ),
        ("no content type", {"content": json.dumps(body).encode(), "headers": ev}),
        (
            "genuine form",
            {
                "content": f"query={QUERY}&top_k=2&user_id={a}".encode(),
                "headers": {**ev, "Content-Type": "application/x-www-form-urlencoded"},
            },
        ),
        ("no token", {"json": body}),
        ("invalid token", {"json": body, "headers": bearer("nope")}),
        ("basic auth", {"json": body, "headers": {"Authorization": "Basic dTpw"}}),
        ("empty bearer", {"json": body, "headers": {"Authorization": "Bearer "}}),
        ("impersonation without the scope", {"json": {**body, "user_id": b}, "headers": me}),
        ("service token names nobody", {"json": {"query": QUERY}, "headers": ev}),
        ("unknown user", {"json": {**body, "user_id": "ghost-user"}, "headers": ev}),
        ("unknown department", {"json": {**body, "department": "moon-base"}, "headers": ev}),
        ("malformed JSON", {"content": b'{"query": ', "headers": {**ev, "Content-Type": "application/json"}}),
        ("not UTF-8", {"content": b'{"query": "\xff"}', "headers": {**ev, "Content-Type": "application/json"}}),
        (
            "NaN literal",
            {"content": b'{"query": "q", "top_k": NaN}', "headers": {**ev, "Content-Type": "application/json"}},
        ),
        ("too deep", {"json": {**body, "extra": deep}, "headers": ev}),
        ("JSON array", {"json": [body], "headers": ev}),
        ("empty body", {"content": b"", "headers": {**ev, "Content-Type": "application/json"}}),
        (
            "oversized",
            {
                "content": b'{"query": "' + b"a" * (1 << 20) + b'"}',
                "headers": {**ev, "Content-Type": "application/json"},
            },
        ),
        ("unsupported content type", {"content": b"<q/>", "headers": {**ev, "Content-Type": "application/xml"}}),
        ("top_k as a string", {"json": {**body, "top_k": "5"}, "headers": ev}),
        ("top_k out of range", {"json": {**body, "top_k": 0}, "headers": ev}),
        ("empty query", {"json": {**body, "query": "   "}, "headers": ev}),
        ("unknown filter key", {"json": {**body, "filters": {"colour": "red"}}, "headers": ev}),
        ("unknown folder filter", {"json": {**body, "filters": {"folder": "/no/such/folder"}}, "headers": ev}),
        ("unknown file type filter", {"json": {**body, "filters": {"file_types": ["exe"]}}, "headers": ev}),
        ("file type filter", {"json": {**body, "filters": {"file_types": ["pdf", "docx"]}}, "headers": ev}),
    ]


def _same(
    fast: TestClient, routed: TestClient, kwargs: dict[str, Any], before: Callable[[], None] = lambda: None
) -> int:
    before()
    a = fast.post(URL, **kwargs)
    before()
    b = routed.post(URL, **kwargs)
    assert a.status_code == b.status_code, (a.text, b.text)
    assert a.content == b.content
    assert sorted(a.headers.multi_items()) == sorted(b.headers.multi_items())
    return a.status_code


def test_every_case_answers_alike(sim: Simulator, clients: tuple[TestClient, TestClient]) -> None:
    statuses = {name: _same(*clients, kwargs) for name, kwargs in _cases(sim)}
    # the matrix reaches every outcome the route can give, so "alike" covers each of them
    assert {200, 400, 401, 403, 413, 415, 422} <= set(statuses.values()), statuses
    assert statuses["eval token as a user"] == statuses["genuine form"] == 200
    assert statuses["impersonation without the scope"] == 403 and statuses["no token"] == 401


@pytest.mark.parametrize(
    "faults", ["errors:share=1", "throttle:share=1", "latency:delay_ms=1:jitter_ms=0", "leaky-acl:share=1"]
)
def test_faults_answer_alike(sim: Simulator, clients: tuple[TestClient, TestClient], faults: str) -> None:
    a, _ = _users(sim)
    specs = parse_fault_specs(faults)
    body = {"json": {"query": QUERY, "top_k": 10, "user_id": a}, "headers": bearer(sim.tokens.eval_token)}
    before = sim.faults.active
    try:
        # setting the faults again restarts their attempt counters: both apps see the same first attempt
        status = _same(*clients, body, before=lambda: sim.faults.replace(specs))
    finally:
        sim.faults.replace(before)
    assert status == {"errors": 503, "throttle": 429}.get(specs[0].name, 200)


def test_failed_permission_check_and_unhandled_error_answer_alike(
    sim: Simulator, clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = _users(sim)
    body = {"json": {"query": QUERY, "top_k": 5, "user_id": a}, "headers": bearer(sim.tokens.eval_token)}

    def broken_mask(*args: object, **kwargs: object) -> None:
        raise RuntimeError("mask store unavailable")

    monkeypatch.setattr(sim, "visible_chunks", broken_mask)
    assert _same(*clients, body) == 503  # fail closed, rendered by the app's handler on both paths

    def bug(*args: object, **kwargs: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(sim, "principal_for", bug)
    assert _same(*clients, body) == 500  # no handler: the boundary's 500 on both paths, server still up


def test_other_methods_and_paths_take_the_routes(sim: Simulator, clients: tuple[TestClient, TestClient]) -> None:
    fast, routed = clients
    for method, url in (("GET", URL), ("PUT", URL), ("POST", URL + "/"), ("POST", "/api/mcp/answer")):
        a = fast.request(method, url, headers=bearer(sim.tokens.eval_token), follow_redirects=False)
        b = routed.request(method, url, headers=bearer(sim.tokens.eval_token), follow_redirects=False)
        assert (a.status_code, a.content) == (b.status_code, b.content), (method, url)
        assert a.status_code != 200


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the calls the fast path makes to the endpoint (it calls ``recall`` by its module name; the route
    holds its own reference to the original function, so the spy never sees a routed request)."""
    calls: list[str] = []
    endpoint = recall_api.recall

    async def spy(request: Any) -> Any:
        calls.append(request.url.path)
        return await endpoint(request)

    monkeypatch.setattr(recall_api, "recall", spy)
    return calls


def test_the_fast_path_serves_and_the_route_stays_documented(
    sim: Simulator, clients: tuple[TestClient, TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, routed = clients
    calls = _spy(monkeypatch)
    body = {"query": QUERY, "user_id": _users(sim)[0]}
    assert routed.post(URL, json=body, headers=bearer(sim.tokens.eval_token)).status_code == 200
    assert calls == []
    assert fast.post(URL, json=body, headers=bearer(sim.tokens.eval_token)).status_code == 200
    assert calls == [URL]
    op = fast.get("/openapi.json").json()["paths"][URL]["post"]
    assert op == routed.get("/openapi.json").json()["paths"][URL]["post"]
    assert op["security"] and "RecallRequest" in json.dumps(op["requestBody"])


def test_a_real_server_takes_the_fast_path(drivebench_server: ServedSimulator, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    sim = drivebench_server.sim
    calls = _spy(monkeypatch)
    r = httpx.post(
        drivebench_server.url + URL,
        json={"query": QUERY, "user_id": _users(sim)[0]},
        headers=bearer(sim.tokens.eval_token),
        timeout=30,
    )
    assert r.status_code == 200, r.text
    assert calls == [URL] and r.json()["results"]


def test_the_fast_path_renders_what_the_app_renders_with_the_apps_renderer(sim: Simulator) -> None:
    """No lookup of its own: every class the app registers a handler for is rendered by ``handle_error``, the
    function the fast path calls; an error outside that set is left to the boundary's 500 in both apps (above)."""
    from drivebench.server.api import boundary

    app = create_app(sim)
    registered = {kind: handler for kind, handler in app.exception_handlers.items() if kind not in (500, Exception)}
    assert set(boundary.RENDERED) <= set(registered)
    assert all(registered[kind] is boundary.handle_error for kind in boundary.RENDERED)
    # the framework's own HTTP defaults (HTTPException, request validation) are overridden by the same renderer;
    # what is left is its websocket handler, and no route here is a websocket
    others = {kind.__name__ for kind, handler in registered.items() if handler is not boundary.handle_error}
    assert others <= {"WebSocketRequestValidationError"}


def test_the_documented_body_is_the_model_the_endpoint_validates(clients: tuple[TestClient, TestClient]) -> None:
    """The OpenAPI document, diffed against what the endpoint accepts: its request body is ``RecallRequest``'s JSON
    schema, field for field, required for required."""
    from drivebench.server.api.schemas import RecallRequest

    spec = clients[0].get("/openapi.json").json()
    body = spec["paths"][URL]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/RecallRequest"}
    documented = spec["components"]["schemas"]["RecallRequest"]
    expected = RecallRequest.model_json_schema(ref_template="#/components/schemas/{model}")
    expected.pop("$defs", None)
    assert documented == expected
    assert set(documented["properties"]) == set(RecallRequest.model_fields)
