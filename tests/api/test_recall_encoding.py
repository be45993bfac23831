"""The recall response is written without building its pydantic models (``recall_json``):
the bytes must be exactly what the documented model writes, over HTTP as in-process, and the OpenAPI schema
still names the model."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from drivebench.drive.permissions.engine import Principal
from drivebench.formats.corpus import SECRET_LEVELS
from drivebench.formats.evalset import EvalQuery
from drivebench.server.api import request as request_module
from drivebench.server.api.recall import recall_json, to_response
from drivebench.server.api.schemas import RecallRequest
from drivebench.simulator.backend import Simulator
from drivebench.simulator.recall import RecallHit, RecallOutcome
from drivebench.testing import ServedSimulator

URL = "/api/mcp/recall"

text = st.text(st.characters(codec="utf-8"), max_size=40)  # any code point: CJK, controls, U+2028, quotes
score = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.0, -0.0, 1e-7, 1e16, 1e300, 0.1])


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[RecallRequest, RecallOutcome, list[str]]:
    n_levels = len(SECRET_LEVELS) - 1
    principal = Principal(
        subject=draw(text),
        user_id=draw(st.none() | text),
        roles=tuple(draw(st.lists(text, max_size=3))),
        department=draw(st.none() | text),
        clearance=draw(st.integers(0, n_levels)),
        evaluated_as=draw(st.booleans()),
        caller=draw(st.none() | text),
    )
    hit = st.builds(
        RecallHit,
        rank=st.integers(1, 100),
        doc_id=text,
        version_id=text,
        name=text,
        path=text,
        file_type=text,
        score=score,
        chunk_id=st.integers(0, 2**40),
        snippet=text,
        part=text,
        secret_level=st.integers(0, n_levels),
        shown_chunk_id=st.none() | st.integers(0, 2**52 - 1),  # a user's opaque chunk id
    )
    offset = draw(st.sampled_from([UTC, timezone(timedelta(hours=8))]))
    at = draw(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(offset)))
    hits = draw(st.lists(hit, max_size=12))
    # a user is shown no global counters (None); a service token the drive's
    outcome = RecallOutcome(principal, at, hits, draw(st.none() | text), draw(st.none() | st.integers(0, 10**9)))
    req = RecallRequest(query=draw(text.filter(str.strip)), top_k=draw(st.integers(1, 100)))
    return req, outcome, draw(st.lists(text, max_size=3))


@settings(max_examples=200, deadline=None)
@given(outcomes())
def test_recall_json_is_the_response_models_json_byte_for_byte(
    case: tuple[RecallRequest, RecallOutcome, list[str]],
) -> None:
    req, outcome, warnings = case
    assert recall_json(req, outcome, warnings) == to_response(req, outcome, warnings).model_dump_json().encode()


@pytest.fixture(scope="module")
def asked(seed_evalset: list[EvalQuery]) -> list[EvalQuery]:
    qs = [q for q in seed_evalset if q.user_id and q.as_of is None][:6]
    assert len(qs) >= 3
    return qs


def test_http_recall_equals_the_in_process_records(
    drivebench_server: ServedSimulator, sim: Simulator, asked: list[EvalQuery]
) -> None:
    """Over a real uvicorn server, the body is the model's JSON of the same ``Simulator.recall`` (same
    principal, query and instant), key order included; the results are not empty (a test that could pass
    on two empty lists proves nothing)."""
    token = sim.tokens.eval_token
    info = sim.tokens.resolve(token)
    assert info is not None
    seen = 0
    with httpx.Client(base_url=drivebench_server.url, headers={"Authorization": f"Bearer {token}"}) as http:
        for q in asked:
            body = {"query": q.query, "user_id": q.user_id, "top_k": 10}
            r = http.post(URL, json=body)
            assert r.status_code == 200, r.text
            assert r.headers["content-type"] == "application/json"
            req = RecallRequest.model_validate(body)
            principal = sim.principal_for(info, user_id=q.user_id)
            expected = to_response(req, sim.recall(principal, q.query, 10), []).model_dump_json()
            assert r.content == expected.encode()
            assert list(json.loads(r.content)) == list(json.loads(expected))  # key order
            seen += len(r.json()["results"])
    assert seen > 0


def test_openapi_still_documents_the_recall_response_model(drivebench_server: ServedSimulator) -> None:
    spec = httpx.get(drivebench_server.url + "/openapi.json").json()
    ok = spec["paths"][URL]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/RecallResponse"}
    fields = spec["components"]["schemas"]["RecallResponse"]["properties"]
    assert list(fields) == list(json.loads(recall_json_example()))


def recall_json_example() -> bytes:
    p = Principal("u:x", "x", ("r",), "d", 0)
    hit = RecallHit(1, "d1", "v1", "n", "/p", "txt", 1.5, 3, "s", "body", 0)
    return recall_json(RecallRequest(query="q"), RecallOutcome(p, datetime(2026, 1, 1, tzinfo=UTC), [hit], "h", 1), [])


def test_the_body_is_parsed_once_and_judged_as_before(
    client: TestClient, sim: Simulator, asked: list[EvalQuery], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boundary's JSON check hands its parse to the route (one ``parse_json`` per request); a body the
    route must refuse is still refused when the parse comes from the boundary."""
    calls: list[str] = []
    real = request_module.parse_json
    monkeypatch.setattr(request_module, "parse_json", lambda text: calls.append(text) or real(text))
    auth = {"Authorization": f"Bearer {sim.tokens.eval_token}"}
    q = asked[0]
    r = client.post(URL, json={"query": q.query, "user_id": q.user_id, "top_k": 3}, headers=auth)
    assert r.status_code == 200, r.text
    assert len(calls) == 1
    r = client.post(URL, content=b'["not", "an", "object"]', headers={**auth, "Content-Type": "application/json"})
    assert r.status_code == 400
    assert "must be a JSON object" in r.json()["error"]["message"]
    assert len(calls) == 2
