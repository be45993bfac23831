"""``GET/PUT /_sim/faults`` (admin only), the request-fault middleware, and the pytest fixture."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FAULT_DEFS, FaultSet
from tests.support.http import bearer

BODY = {"query": "项目X的技术方案审批人", "user_id": "u001", "top_k": 5}


def test_fault_control_needs_the_admin_token(client: TestClient, sim: Simulator) -> None:
    assert client.get("/_sim/faults").status_code == 401
    assert client.get("/_sim/faults", headers=bearer("dbs_not-a-token")).status_code == 401
    for token in (sim.tokens.eval_token, sim.tokens.for_subject("u001").token):
        r = client.get("/_sim/faults", headers=bearer(token))
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        assert client.put("/_sim/faults", json={"faults": ["errors"]}, headers=bearer(token)).status_code == 403
    assert not sim.faults


def test_put_replaces_and_get_reports(client: TestClient, sim: Simulator, drivebench_faults: FaultSet) -> None:
    admin = bearer(sim.tokens.admin_token)
    r = client.put("/_sim/faults", json={"faults": "latency:delay_ms=1:jitter_ms=0,errors:share=0"}, headers=admin)
    assert r.status_code == 200, r.text
    assert [f["name"] for f in r.json()["active"]] == ["latency", "errors"]
    r = client.put(
        "/_sim/faults", json={"faults": [{"name": "throttle", "params": {"share": 0.0}}, "leaky-acl"]}, headers=admin
    )
    assert [f["name"] for f in r.json()["active"]] == ["throttle", "leaky-acl"]
    got = client.get("/_sim/faults", headers=admin).json()
    assert got["active"] == r.json()["active"] and len(got["available"]) == len(FAULT_DEFS) == 14
    assert got["active"][0]["params"] == {"retry_after_s": 1.0, "seed": 0, "share": 0.0}
    assert client.put("/_sim/faults", json={"faults": []}, headers=admin).json()["active"] == []
    assert not sim.faults


def test_bad_fault_bodies_are_400(client: TestClient, sim: Simulator) -> None:
    admin = bearer(sim.tokens.admin_token)
    for body in ({"faults": ["nope"]}, {"faults": "errors:share=3"}, {"faults": 3}, {"fault": []}, {}):
        r = client.put("/_sim/faults", json=body, headers=admin)
        assert r.status_code == 400, (body, r.text)
        assert r.json()["error"]["code"] == "invalid-request"
    assert not sim.faults


def test_errors_answer_the_configured_5xx_and_nothing_else_is_touched(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    before = drivebench_faults.injected["errors"]  # the session's fault set may have counted some already
    drivebench_faults.enable("errors", share=1.0, status=502)
    r = client.post("/api/mcp/recall", json=BODY, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 502 and r.json()["error"]["code"] == "injected-fault"
    assert client.post("/api/mcp/answer", json=BODY, headers=bearer(sim.tokens.eval_token)).status_code == 502
    assert client.get("/healthz").status_code == 200  # only /api/ is faulted
    assert client.get("/_sim/faults", headers=bearer(sim.tokens.admin_token)).status_code == 200
    assert drivebench_faults.injected["errors"] - before == 2


def test_throttle_answers_429_with_retry_after(client: TestClient, sim: Simulator, drivebench_faults: FaultSet) -> None:
    drivebench_faults.enable("throttle", share=1.0, retry_after_s=2)
    r = client.post("/api/mcp/recall", json=BODY, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 429 and r.headers["retry-after"] == "2"
    assert r.json()["error"]["code"] == "throttled"


def test_permission_outage_fails_recall_and_answer_closed(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    headers = bearer(sim.tokens.eval_token)
    assert client.post("/api/mcp/recall", json=BODY, headers=headers).json()["results"]  # clean: documents
    before = drivebench_faults.injected["permission-outage"]
    drivebench_faults.enable("permission-outage")
    r = client.post("/api/mcp/recall", json=BODY, headers=headers)
    assert r.status_code == 503 and r.json()["error"]["code"] == "permission-check-failed", r.text
    assert "results" not in r.json()
    assert client.post("/api/mcp/answer", json=BODY, headers=headers).status_code == 503
    assert client.get("/healthz").status_code == 200
    assert drivebench_faults.injected["permission-outage"] - before == 2


def test_latency_delays_and_the_body_still_arrives(
    client: TestClient, sim: Simulator, drivebench_faults: FaultSet
) -> None:
    clean = client.post("/api/mcp/recall", json=BODY, headers=bearer(sim.tokens.eval_token)).json()
    drivebench_faults.enable("latency", delay_ms=300, jitter_ms=0)
    started = time.perf_counter()
    r = client.post("/api/mcp/recall", json=BODY, headers=bearer(sim.tokens.eval_token))
    assert time.perf_counter() - started >= 0.3
    assert r.status_code == 200 and r.json()["results"] == clean["results"]


def test_a_share_of_errors_is_reproducible(client: TestClient, sim: Simulator, drivebench_faults: FaultSet) -> None:
    headers = bearer(sim.tokens.eval_token)
    bodies = [{**BODY, "query": f"预算 {i}"} for i in range(6)]

    def statuses() -> list[int]:
        drivebench_faults.enable("errors", share=0.5)  # setting it (again) restarts the attempt counters
        return [client.post("/api/mcp/recall", json=b, headers=headers).status_code for b in bodies for _ in range(2)]

    first, second = statuses(), statuses()
    assert first == second and {200, 503} <= set(first)


def test_the_fixture_restores_the_session_faults(sim: Simulator, drivebench_faults: FaultSet) -> None:
    assert drivebench_faults is sim.faults and not drivebench_faults
    drivebench_faults.enable("citation-drop")


def test_after_the_fixture_the_server_is_clean_again(sim: Simulator) -> None:
    assert not sim.faults
