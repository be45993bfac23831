"""The control plane ``/_sim`` over HTTP, and the same operations from the pytest fixture objects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from drivebench.corpora.builtin import resolve_corpus
from drivebench.server.process import start_in_thread
from drivebench.simulator.backend import Simulator
from drivebench.testing import ServedSimulator
from tests.support.sims import auth, client_for, hit_ids, recall, upload


def test_control_plane_needs_the_admin_token(fresh_sim: Simulator) -> None:
    client = client_for(fresh_sim)
    calls = [
        ("POST", "/_sim/reset", None),
        ("POST", "/_sim/seed", {"corpus": "seed"}),
        ("GET", "/_sim/clock", None),
        ("PUT", "/_sim/clock", {"now": "2027-01-01T00:00:00+00:00"}),
        ("POST", "/_sim/clock/advance", {"days": 1}),
        ("GET", "/_sim/stats", None),
        ("POST", "/_sim/checkpoint", None),
        ("POST", "/_sim/tokens", {"subject": "u009", "ttl_seconds": 60}),
    ]
    for method, path, body in calls:
        assert client.request(method, path, json=body).status_code == 401, path
        for who in ("u009", None):
            headers = auth(fresh_sim, who) if who else {"Authorization": f"Bearer {fresh_sim.tokens.eval_token}"}
            r = client.request(method, path, json=body, headers=headers)
            assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", (path, who)
    assert fresh_sim.drive.clock.now() == datetime(2026, 11, 1, tzinfo=UTC)  # nothing happened


def test_reset_seed_clock_stats(fresh_sim: Simulator) -> None:
    client, admin = client_for(fresh_sim), auth(fresh_sim, "admin")
    initial = client.get("/_sim/stats", headers=admin).json()
    assert {"documents", "versions", "chunks", "index_version", "policy_version", "snapshot", "clock"} <= set(initial)
    assert initial["documents"] == 29 and initial["changes"] == 0 and initial["durable"] is None
    doc = upload(client, fresh_sim, "u009", "/it", "tmp.md", b"# tmp\nreset-marker").json()["doc_id"]
    client.post("/api/v1/files/d0001/trash", headers=admin)
    client.post("/_sim/clock/advance", headers=admin, json={"days": 2, "hours": 1})
    changed = client.get("/_sim/stats", headers=admin).json()
    assert changed["documents"] == 30 and changed["trashed"] == 1 and changed["snapshot"] != initial["snapshot"]
    assert changed["index_version"] > initial["index_version"] and changed["policy_version"] > initial["policy_version"]
    assert changed["clock"].startswith("2026-11-03T01:00")

    r = client.post("/_sim/reset", headers=admin)
    assert r.status_code == 200
    after = r.json()
    for key in ("documents", "trashed", "versions", "chunks", "changes", "snapshot", "clock", "grants"):
        assert after[key] == initial[key], key
    assert doc not in hit_ids(recall(client, fresh_sim, "u009", "reset-marker"))
    assert client.get(f"/api/v1/files/{doc}", headers=admin).status_code == 404

    r = client.post("/_sim/seed", headers=admin, json={"corpus": str(resolve_corpus("seed"))})
    assert r.status_code == 200 and r.json()["snapshot"] == initial["snapshot"]  # by path: the same corpus
    r = client.post("/_sim/seed", headers=admin, json={"corpus": "no-such-corpus"})
    assert r.status_code == 400 and "built-in" in r.json()["error"]["message"]

    r = client.put("/_sim/clock", headers=admin, json={"now": "2027-03-01T08:00:00+00:00"})
    assert r.status_code == 200 and r.json()["now"].startswith("2027-03-01T08:00")
    assert client.get("/_sim/clock", headers=admin).json()["now"].startswith("2027-03-01T08:00")
    assert recall(client, fresh_sim, "u001", "项目X")["as_of"].startswith("2027-03-01T08:00")
    r = client.put("/_sim/clock", headers=admin, json={"now": "2026-01-01T00:00:00+00:00"})
    assert r.status_code == 409  # before the latest change: history must stay ordered
    assert client.put("/_sim/clock", headers=admin, json={"now": "2027-03-02T00:00:00"}).status_code == 400
    assert client.post("/_sim/clock/advance", headers=admin, json={"days": -1}).status_code == 422


def test_fixture_methods_act_on_the_served_state(fresh_sim: Simulator) -> None:
    served = ServedSimulator(fresh_sim, start_in_thread(fresh_sim))
    try:
        admin = {"Authorization": f"Bearer {fresh_sim.tokens.admin_token}"}
        first = served.stats()
        with httpx.Client(base_url=served.url, headers=admin, timeout=30) as http:
            assert http.get("/_sim/stats").json()["snapshot"] == first["snapshot"]
            assert http.post("/api/v1/files/d0001/trash").status_code == 200
            assert served.stats()["trashed"] == 1
            now = served.advance_clock(timedelta(days=1))
            assert http.get("/_sim/clock").json()["now"].startswith(now.strftime("%Y-%m-%dT%H:%M"))
            assert served.set_clock(datetime(2027, 1, 1, tzinfo=UTC)) == datetime(2027, 1, 1, tzinfo=UTC)
            assert served.reset()["trashed"] == 0
            assert http.get("/_sim/stats").json()["snapshot"] == first["snapshot"]
            assert served.seed("seed")["snapshot"] == first["snapshot"]
    finally:
        served.server.stop()
