"""Bad input gets a clear error naming the field, and the server keeps serving."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from drivebench.simulator.backend import Simulator
from tests.support.http import bearer

URL = "/api/mcp/recall"


@pytest.fixture(scope="module")
def auth(sim: Simulator) -> dict[str, str]:
    return bearer(sim.tokens.for_subject(sorted(sim.drive.users)[0]).token)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "", "top_k": 5}, "query"),
        ({"query": "   ", "top_k": 5}, "query"),
        ({"query": "x" * 2001, "top_k": 5}, "query"),
        ({"top_k": 5}, "query"),
        ({"query": 42, "top_k": 5}, "query"),
        ({"query": "budget", "top_k": 0}, "top_k"),
        ({"query": "budget", "top_k": 101}, "top_k"),
        ({"query": "budget", "top_k": 10**9}, "top_k"),
        ({"query": "budget", "top_k": -1}, "top_k"),
        ({"query": "budget", "top_k": "ten"}, "top_k"),
        ({"query": "budget", "top_k": 2.5}, "top_k"),
        ({"query": "budget", "top_k": True}, "top_k"),
        ({"query": "budget", "as_of": "yesterday-ish"}, "as_of"),
        ({"query": "budget", "filters": {"owner": "me"}}, "filters.owner"),
    ],
)
def test_invalid_fields_are_422_naming_the_field(
    client: TestClient, auth: dict[str, str], body: dict[str, object], field: str
) -> None:
    r = client.post(URL, json=body, headers=auth)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == "invalid-field"
    assert field in err["fields"], err


@pytest.mark.parametrize(
    ("raw", "ctype", "status", "needle"),
    [
        (b'{"query": "budget", ', "application/json", 400, "malformed JSON"),
        (b'["query", "budget"]', "application/json", 400, "JSON object"),
        (b'"just a string"', None, 400, "JSON object"),
        (b"", "application/json", 400, "empty body"),
        (b"\xff\xfe\x00", "application/json", 400, "UTF-8"),
        (b'{"query": "budget"}', "application/xml", 415, "Content-Type"),
    ],
)
def test_malformed_bodies_are_clear_errors(
    client: TestClient, auth: dict[str, str], raw: bytes, ctype: str | None, status: int, needle: str
) -> None:
    headers = dict(auth)
    if ctype:
        headers["Content-Type"] = ctype
    r = client.post(URL, content=raw, headers=headers)
    assert r.status_code == status, r.text
    assert needle in r.json()["error"]["message"]


def test_json_without_content_type_header_is_accepted(client: TestClient, auth: dict[str, str]) -> None:
    # What curl -d sends: a JSON text labelled application/x-www-form-urlencoded.
    raw = '{"query": "项目X的技术方案审批人", "top_k": 3}'.encode()
    headers = {**auth, "Content-Type": "application/x-www-form-urlencoded"}
    r = client.post(URL, content=raw, headers=headers)
    assert r.status_code == 200, r.text
    assert 1 <= len(r.json()["results"]) <= 3


def test_real_form_fields_are_accepted(client: TestClient, auth: dict[str, str]) -> None:
    r = client.post(URL, data={"query": "budget", "top_k": "2"}, headers=auth)
    assert r.status_code == 200, r.text
    assert r.json()["top_k"] == 2 and len(r.json()["results"]) <= 2


def test_unknown_fields_are_ignored_and_listed(client: TestClient, auth: dict[str, str]) -> None:
    r = client.post(URL, json={"query": "budget", "top_k": 2, "temperature": 0.3, "stream": True}, headers=auth)
    assert r.status_code == 200
    warnings = r.json()["warnings"]
    assert any("temperature" in w for w in warnings) and any("stream" in w for w in warnings)


def test_unapplicable_filter_is_400_never_ignored(client: TestClient, auth: dict[str, str]) -> None:
    r = client.post(URL, json={"query": "budget", "filters": {"file_types": ["exe"]}}, headers=auth)
    assert r.status_code == 400 and "exe" in r.json()["error"]["message"]
    r = client.post(URL, json={"query": "budget", "filters": {"folder": "/no/such/folder"}}, headers=auth)
    assert r.status_code == 400 and "/no/such/folder" in r.json()["error"]["message"]


def test_filters_are_applied(client: TestClient, auth: dict[str, str]) -> None:
    r = client.post(URL, json={"query": "项目X", "top_k": 10, "filters": {"file_types": ["pdf"]}}, headers=auth)
    assert r.status_code == 200
    results = r.json()["results"]
    assert results and {x["file_type"] for x in results} == {"pdf"}


def test_server_keeps_serving_after_bad_requests(client: TestClient, auth: dict[str, str]) -> None:
    for raw in (b"{", b"[]", b"null", b'{"query": null}', b"\x00" * 100):
        client.post(URL, content=raw, headers={**auth, "Content-Type": "application/json"})
    r = client.post(URL, json={"query": "budget", "top_k": 1}, headers=auth)
    assert r.status_code == 200 and len(r.json()["results"]) == 1
