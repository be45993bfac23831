"""Findings 3 and 5: no request raises an unhandled exception; every error has the common shape
``{"error": {"code", "message", "fields"}}`` (the framework's own 404/405/413/415 and undecodable bodies
too); after an error the keep-alive connection stays usable."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator
from tests.support.security import h

RECALL, ANSWER = "/api/mcp/recall", "/api/mcp/answer"
EDGE_TIMES = ("0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00", "0001-01-01T00:00:00", "9999-12-31T23:59:59")


def _shape(r, status: int | tuple[int, ...]) -> dict:
    statuses = (status,) if isinstance(status, int) else status
    assert r.status_code in statuses, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "fields"}, body
    return body["error"]


def test_deeply_nested_json_is_a_400(module_client: TestClient, module_sim: Simulator) -> None:
    deep = '{"query": "x", "extra": ' + "[" * 50_000 + "]" * 50_000 + "}"
    for path in (RECALL, ANSWER):
        for ctype in ("application/json", None):  # the vendor's curl sends no JSON content type
            headers = {**h(module_sim, "u001"), **({"Content-Type": ctype} if ctype else {})}
            err = _shape(module_client.post(path, content=deep, headers=headers), 400)
            assert "nested" in err["message"], err
    patch = module_client.patch(
        "/api/v1/files/d0001",
        content="[" * 50_000,
        headers={**h(module_sim, "admin"), "Content-Type": "application/json"},
    )
    _shape(patch, 400)
    moderately = '{"query": "x", "extra": ' + "[" * 40 + "]" * 40 + "}"  # within recursion, beyond the bound
    _shape(
        module_client.post(
            RECALL, content=moderately, headers={**h(module_sim, "u001"), "Content-Type": "application/json"}
        ),
        400,
    )


@pytest.mark.parametrize("when", EDGE_TIMES)
def test_datetimes_near_the_limits_are_4xx(module_client: TestClient, module_sim: Simulator, when: str) -> None:
    for path in (RECALL, ANSWER):
        _shape(module_client.post(path, json={"query": "x", "as_of": when}, headers=h(module_sim, "u001")), (400, 422))
    eff = module_client.get(
        "/api/permissions/effective", params={"path": "/company", "as_of": when}, headers=h(module_sim, "u001")
    )
    _shape(eff, (400, 422))
    grant = {"path": "/company", "subject": {"kind": "everyone"}, "actions": ["list"], "valid_from": when}
    _shape(module_client.post("/api/permissions/grants", json=grant, headers=h(module_sim, "admin")), (400, 422))
    _shape(module_client.put("/_sim/clock", json={"now": when}, headers=h(module_sim, "admin")), (400, 409, 422))
    assert module_sim.drive.grants.keys() == set(module_sim.drive.grants)  # nothing added
    assert all(g.valid_from is None or g.valid_from.year > 1 for g in module_sim.drive.grants.values())


def test_absurd_numbers_are_4xx_and_change_nothing(module_client: TestClient, module_sim: Simulator) -> None:
    admin = {**h(module_sim, "admin"), "Content-Type": "application/json"}
    now = module_sim.drive.clock.now()
    for body in ('{"days": 1e300}', '{"days": NaN}', '{"seconds": Infinity}', '{"hours": -1}', '{"days": 3e6}'):
        _shape(module_client.post("/_sim/clock/advance", content=body, headers=admin), (400, 422))
    assert module_sim.drive.clock.now() == now
    before = module_client.get("/api/v1/settings/retention", headers=admin).json()
    for body in ('{"days": 1e300}', '{"trash_days": 1e300}', '{"days": NaN}', '{"versions_kept": 10000000000}'):
        _shape(module_client.put("/api/v1/settings/retention", content=body, headers=admin), (400, 422))
    assert module_client.get("/api/v1/settings/retention", headers=admin).json() == before
    # and uploads keep working (they answered 500 forever after a bad retention setting was stored)
    r = module_client.post(
        "/api/v1/files", headers=h(module_sim, "admin"), files={"file": ("n.md", b"# n\n")}, data={"folder": "/company"}
    )
    assert r.status_code == 201, r.text
    for spec in (
        '{"faults": "latency:delay_ms=1e300"}',
        '{"faults": [{"name": "latency", "params": {"delay_ms": 1e9}}]}',
    ):
        _shape(module_client.put("/_sim/faults", content=spec, headers=admin), 400)
    assert module_client.get("/_sim/faults", headers=admin).json()["active"] == []


def test_long_strings_are_4xx(module_client: TestClient, module_sim: Simulator) -> None:
    long = "x" * 100_000
    for field in ("user_role", "user_id", "department"):
        _shape(module_client.post(RECALL, json={"query": "x", field: long}, headers=h(module_sim, "eval")), 422)
    _shape(
        module_client.post(
            RECALL, json={"query": "x", "filters": {"folder": "/" + long}}, headers=h(module_sim, "u001")
        ),
        422,
    )
    _shape(module_client.get("/api/v1/files", params={"folder": "/" + "x" * 5000}, headers=h(module_sim, "u001")), 422)
    _shape(module_client.post("/_sim/seed", json={"corpus": "/" + "a" * 5000}, headers=h(module_sim, "admin")), 422)
    _shape(module_client.post("/_sim/seed", json={"corpus": "/" + "a" * 4000}, headers=h(module_sim, "admin")), 400)


def test_body_size_is_bounded(module_client: TestClient, module_sim: Simulator) -> None:
    big = b'{"query": "' + b"x" * (2 << 20) + b'"}'
    _shape(
        module_client.post(RECALL, content=big, headers={**h(module_sim, "u001"), "Content-Type": "application/json"}),
        413,
    )

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
        yield b'{"query": "'
        for _ in range(40):
            yield b"x" * 65536
        yield b'"}'

    _shape(
        module_client.post(RECALL, content=chunks(), headers={**h(module_sim, "u001"), "Content-Type": "text/plain"}),
        413,
    )


def test_framework_errors_have_the_common_shape(module_client: TestClient, module_sim: Simulator) -> None:
    assert _shape(module_client.get("/no/such/route", headers=h(module_sim, "u001")), 404)["code"] == "not-found"
    assert _shape(module_client.delete(RECALL, headers=h(module_sim, "u001")), 405)["code"] == "method-not-allowed"
    upload = module_client.post("/api/v1/files", json={"folder": "/company"}, headers=h(module_sim, "admin"))
    assert _shape(upload, 415)["code"] == "bad-body"
    for path, method in ((RECALL, "post"), ("/api/v1/files/d0001", "patch"), ("/api/permissions/move", "post")):
        r = getattr(module_client, method)(
            path,
            content=b'{"query": "\xff\xfe"}',
            headers={**h(module_sim, "admin"), "Content-Type": "application/json"},
        )
        assert "not UTF-8" in _shape(r, 400)["message"]
    r = module_client.post("/api/v1/files/d0001/trash", content=b"\xff", headers=h(module_sim, "admin"))
    assert r.status_code == 200  # a body the route does not read is no error


def test_keep_alive_connection_survives_an_error(module_sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real uvicorn server: an unexpected exception answers 500 in the common shape and the same TCP
    connection then serves the next request (Starlette's default re-raises and the connection is reset)."""

    def boom() -> dict:
        raise RuntimeError("injected")

    monkeypatch.setattr(module_sim, "stats", boom)
    admin = module_sim.tokens.admin_token
    with start_in_thread(module_sim) as server, socket.create_connection((server.host, server.port), timeout=10) as s:
        f = s.makefile("rb")
        for path, status in (("/_sim/stats", 500), ("/no/such", 404), ("/healthz", 200)):
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {admin}\r\n\r\n".encode())
            line = f.readline()
            assert line.startswith(f"HTTP/1.1 {status}".encode()), (path, line)
            length = 0
            while (header := f.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
                assert not (name.lower() == "connection" and "close" in value.lower()), (path, header)
            body = f.read(length)
            if status != 200:
                assert b'"error"' in body and b'"fields"' in body, body
