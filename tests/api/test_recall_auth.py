"""Identity comes from the token: 401 without one, 403 when the body claims someone else."""

from __future__ import annotations

from fastapi.testclient import TestClient

from drivebench.drive.tokens import make_token
from drivebench.simulator.backend import Simulator
from tests.support.http import bearer

URL = "/api/mcp/recall"
BODY = {"query": "项目X的技术方案审批人", "top_k": 5}


def _user_with_role(sim: Simulator, role: str) -> str:
    return next(u.user_id for u in sorted(sim.drive.users.values(), key=lambda u: u.user_id) if role in u.roles)


def test_missing_token_is_401_with_challenge(client: TestClient) -> None:
    r = client.post(URL, json=BODY)
    assert r.status_code == 401
    assert r.headers["www-authenticate"].lower().startswith("bearer")
    assert r.json()["error"]["code"] == "unauthorized"


def test_invalid_and_malformed_tokens_are_401(client: TestClient, sim: Simulator) -> None:
    forged = make_token(sim.drive.name, "u001", secret=b"not-the-secret")
    for headers in (bearer("nope"), bearer(forged), {"Authorization": "Basic dTpw"}, {"Authorization": "Bearer "}):
        r = client.post(URL, json=BODY, headers=headers)
        assert r.status_code == 401, headers
        assert "www-authenticate" in r.headers


def test_principal_is_the_tokens_user(client: TestClient, sim: Simulator) -> None:
    uid = _user_with_role(sim, "engineer")
    r = client.post(URL, json={**BODY, "user_role": "engineer"}, headers=bearer(sim.tokens.for_subject(uid).token))
    assert r.status_code == 200, r.text
    p = r.json()["principal"]
    assert p["user_id"] == uid and p["evaluated_as"] is False and "engineer" in p["roles"]


def test_claiming_a_role_not_held_is_403(client: TestClient, sim: Simulator) -> None:
    uid = next(u.user_id for u in sim.drive.users.values() if "admin" not in u.roles)
    r = client.post(URL, json={**BODY, "user_role": "admin"}, headers=bearer(sim.tokens.for_subject(uid).token))
    assert r.status_code == 403
    assert "admin" in r.json()["error"]["message"]


def test_user_token_cannot_impersonate_another_user(client: TestClient, sim: Simulator) -> None:
    a, b = sorted(sim.drive.users)[:2]
    r = client.post(URL, json={**BODY, "user_id": b}, headers=bearer(sim.tokens.for_subject(a).token))
    assert r.status_code == 403
    assert "evaluate-as" in r.json()["error"]["message"]


def test_unknown_user_role_department_are_400_naming_them(client: TestClient, sim: Simulator) -> None:
    token = bearer(sim.tokens.eval_token)
    for field, value in (("user_id", "ghost-user"), ("user_role", "astronaut"), ("department", "moon-base")):
        body = {**BODY, field: value}
        if field == "department":
            body["user_role"] = "engineer"
        r = client.post(URL, json=body, headers=token)
        assert r.status_code == 400, (field, r.text)
        assert value in r.json()["error"]["message"]


def test_eval_token_must_name_a_principal(client: TestClient, sim: Simulator) -> None:
    r = client.post(URL, json=BODY, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 400
    assert "user_id or user_role" in r.json()["error"]["message"]


def test_eval_token_evaluates_as_user_and_is_audited(client: TestClient, sim: Simulator) -> None:
    uid = sorted(sim.drive.users)[-1]
    before = len(sim.audit)
    r = client.post(URL, json={**BODY, "user_id": uid}, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 200
    p = r.json()["principal"]
    assert p["user_id"] == uid and p["evaluated_as"] is True and p["caller"] == "svc:evaluator"
    assert sim.audit[before:] and sim.audit[-1]["caller"] == "svc:evaluator"


def test_eval_token_evaluates_as_role_with_department(client: TestClient, sim: Simulator) -> None:
    holder = next(u for u in sim.drive.users.values() if "engineer" in u.roles)
    body = {**BODY, "user_role": "engineer", "department": holder.department}
    r = client.post(URL, json=body, headers=bearer(sim.tokens.eval_token))
    assert r.status_code == 200, r.text
    p = r.json()["principal"]
    assert p["user_id"] is None and p["roles"] == ["engineer"] and p["department"] == holder.department


def test_the_evaluate_as_trail_is_bounded(fresh_sim: Simulator) -> None:
    """A long probe session must not grow the simulator without end: the trail keeps the newest entries."""
    from drivebench.simulator.recall import AUDIT_KEEP

    token = fresh_sim.tokens.resolve(fresh_sim.tokens.eval_token)
    assert token is not None
    for i in range(2 * AUDIT_KEEP + 5):
        fresh_sim.principal_for(token, user_id="u001" if i % 2 else "u003")
    assert AUDIT_KEEP <= len(fresh_sim.audit) <= 2 * AUDIT_KEEP
    assert [e["as"] for e in fresh_sim.audit[-2:]] == ["user:u001", "user:u003"]  # the newest are kept
