"""The permissions HTTP API: who may list/add/remove grants, effective permissions with their sources,
moves, changes taking effect on the very next recall, and fail-closed 503s."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from drivebench.drive.permissions.compiler import doc_obj, folder_obj
from drivebench.server.api import create_app
from drivebench.simulator.backend import Simulator
from tests.support.perm_org import TIMES, US, build_sim, org_from

RECALL = "/api/mcp/recall"
GRANTS = "/api/permissions/grants"
EFFECTIVE = "/api/permissions/effective"
MOVE = "/api/permissions/move"


def _org():
    return org_from(
        departments=[("eng", None), ("eng-fe", "eng"), ("fin", None)],
        users=[
            ("alice", "eng", ["dev"], "internal"),
            ("bob", "eng-fe", ["dev"], "internal"),
            ("carol", "fin", ["acct"], "confidential"),
            ("dave", "fin", [], "public"),
        ],
        folders=["/eng", "/eng/specs", "/fin", "/fin-secret", "/archive"],
        docs=[
            ("spec1", "/eng/specs", "internal"),
            ("plan", "/eng", "internal"),
            ("budget", "/fin", "confidential"),
            ("payroll", "/fin-secret", "confidential"),
            ("old", "/archive", "public"),
        ],
        grants=[
            {"grant_id": "g-eng", "path": "/eng", "subject": {"kind": "department", "id": "eng"}, "actions": ["edit"]},
            {"grant_id": "g-alice", "path": "/eng", "subject": {"kind": "user", "id": "alice"}, "actions": ["manage"]},
            {
                "grant_id": "g-fin",
                "path": "/fin",
                "subject": {"kind": "department", "id": "fin"},
                "actions": ["preview"],
            },
            {
                "grant_id": "g-carol",
                "path": "/fin-secret",
                "subject": {"kind": "user", "id": "carol"},
                "actions": ["preview"],
                "valid_until": TIMES[3],
            },
            {"grant_id": "g-all", "path": "/archive", "subject": {"kind": "everyone"}, "actions": ["preview"]},
        ],
    )


@pytest.fixture()
def tiny_org_sim() -> Simulator:
    """A simulator of its own over ``_org()``: four users, five folders, five documents (not the seed corpus)."""
    return build_sim(_org())


@pytest.fixture()
def tiny_org_client(tiny_org_sim: Simulator) -> Iterator[TestClient]:
    yield TestClient(create_app(tiny_org_sim), raise_server_exceptions=False)


def _h(sim: Simulator, who: str) -> dict[str, str]:
    token = {"admin": sim.tokens.admin_token, "eval": sim.tokens.eval_token}.get(who)
    return {"Authorization": f"Bearer {token or sim.tokens.for_subject(who).token}"}


def _recall(client: TestClient, sim: Simulator, who: str) -> set[str]:
    r = client.post(RECALL, json={"query": "budget approval report", "top_k": 20}, headers=_h(sim, who))
    assert r.status_code == 200, r.text
    return {x["doc_id"] for x in r.json()["results"]}


# ---------------------------------------------------------------------------- listing grants
def test_list_grants_who_may(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    r = tiny_org_client.get(GRANTS, params={"path": "/eng/specs", "inherited": True}, headers=_h(tiny_org_sim, "admin"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["target"] == "folder" and body["path"] == "/eng/specs"
    assert {(g["grant_id"], g["inherited"], g["path"]) for g in body["grants"]} == {
        ("g-eng", True, "/eng"),
        ("g-alice", True, "/eng"),
    }
    assert (
        tiny_org_client.get(GRANTS, params={"path": "/eng/specs"}, headers=_h(tiny_org_sim, "admin")).json()["grants"]
        == []
    )
    assert tiny_org_client.get(GRANTS, params={"path": "/eng"}, headers=_h(tiny_org_sim, "eval")).status_code == 200
    assert (
        tiny_org_client.get(
            GRANTS, params={"path": "/eng/specs/spec1.md"}, headers=_h(tiny_org_sim, "alice")
        ).status_code
        == 200
    )
    # edit, not manage
    assert tiny_org_client.get(GRANTS, params={"path": "/eng"}, headers=_h(tiny_org_sim, "bob")).status_code == 403
    hidden = tiny_org_client.get(GRANTS, params={"path": "/eng"}, headers=_h(tiny_org_sim, "dave"))
    missing = tiny_org_client.get(GRANTS, params={"path": "/nowhere"}, headers=_h(tiny_org_sim, "dave"))
    assert hidden.status_code == missing.status_code == 404  # a path you may not list does not exist for you
    assert tiny_org_client.get(GRANTS, params={"path": "/eng"}).status_code == 401


def test_grants_on_a_prefix_sibling_are_not_inherited(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    r = tiny_org_client.get(
        GRANTS, params={"path": "/fin-secret/payroll.md", "inherited": True}, headers=_h(tiny_org_sim, "admin")
    )
    assert {g["grant_id"] for g in r.json()["grants"]} == {"g-carol"}


# ---------------------------------------------------------------------------- adding and removing
def test_add_and_remove_take_effect_on_the_very_next_recall(
    tiny_org_client: TestClient, tiny_org_sim: Simulator
) -> None:
    assert "spec1" not in _recall(tiny_org_client, tiny_org_sim, "dave")
    v0 = tiny_org_sim.drive.policy_version
    body = {
        "path": "/eng/specs",
        "subject": {"kind": "user", "id": "dave"},
        "actions": ["preview"],
        "note": "reviewer",
    }
    r = tiny_org_client.post(GRANTS, json=body, headers=_h(tiny_org_sim, "alice"))  # alice manages /eng
    assert r.status_code == 201, r.text
    grant = r.json()["grant"]
    assert tiny_org_sim.drive.policy_version == v0 + 1 and grant["subject"] == {"kind": "user", "id": "dave"}
    assert r.json()["policy_version"] is None  # a user token is not shown the global count of changes
    dave = tiny_org_sim.engine.user_principal("dave")
    spec1 = tiny_org_sim.drive.documents["spec1"]
    assert dave.clearance == 0 < spec1.secret_level  # clearance still vetoes...
    assert "spec1" not in _recall(tiny_org_client, tiny_org_sim, "dave")
    tiny_org_sim.drive.set_clearance("dave", 1)  # ...until raised: then the grant shows on the next request
    assert "spec1" in _recall(tiny_org_client, tiny_org_sim, "dave")
    r = tiny_org_client.delete(f"{GRANTS}/{grant['grant_id']}", headers=_h(tiny_org_sim, "alice"))
    assert r.status_code == 200, r.text
    assert "spec1" not in _recall(tiny_org_client, tiny_org_sim, "dave")
    assert [
        c.actor for c in tiny_org_sim.drive.changes if c.kind == "acl_changed" and c.grant_id == grant["grant_id"]
    ] == [
        "alice",
        "alice",
    ]


def test_deny_added_by_admin_beats_department_allow_at_once(
    tiny_org_client: TestClient, tiny_org_sim: Simulator
) -> None:
    assert "plan" in _recall(tiny_org_client, tiny_org_sim, "bob")
    body = {"path": "/eng/plan.md", "subject": {"kind": "user", "id": "bob"}, "actions": ["preview"], "effect": "deny"}
    r = tiny_org_client.post(GRANTS, json=body, headers=_h(tiny_org_sim, "admin"))
    assert r.status_code == 201, r.text
    assert r.json()["grant"]["target"] == "document" and r.json()["grant"]["doc_id"] == "plan"
    assert "plan" not in _recall(tiny_org_client, tiny_org_sim, "bob")
    assert "plan" in _recall(tiny_org_client, tiny_org_sim, "alice")


@pytest.mark.parametrize(
    ("who", "body", "status"),
    [
        ("bob", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["preview"]}, 403),
        ("eval", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["preview"]}, 403),
        ("dave", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["preview"]}, 404),
        ("admin", {"path": "/nowhere", "subject": {"kind": "everyone"}, "actions": ["preview"]}, 404),
        ("admin", {"path": "/eng", "subject": {"kind": "user", "id": "ghost"}, "actions": ["preview"]}, 400),
        ("admin", {"path": "/eng", "subject": {"kind": "department", "id": "moon"}, "actions": ["list"]}, 400),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["fly"]}, 422),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": []}, 422),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone", "id": "x"}, "actions": ["list"]}, 422),
        ("admin", {"path": "eng", "subject": {"kind": "everyone"}, "actions": ["list"]}, 422),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["list"], "effect": "maybe"}, 422),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["list"], "extra": 1}, 422),
        (
            "admin",
            {
                "path": "/eng",
                "subject": {"kind": "everyone"},
                "actions": ["list"],
                "valid_from": "2025-03-02T00:00:00Z",
                "valid_until": "2025-03-01T00:00:00Z",
            },
            422,
        ),
        ("admin", {"path": "/eng", "subject": {"kind": "everyone"}, "actions": ["list"], "grant_id": "g-eng"}, 409),
    ],
)
def test_changing_grants_is_refused_cleanly(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, who: str, body: dict, status: int
) -> None:
    v0 = tiny_org_sim.drive.policy_version
    r = tiny_org_client.post(GRANTS, json=body, headers=_h(tiny_org_sim, who))
    assert r.status_code == status, r.text
    assert "error" in r.json()
    assert tiny_org_sim.drive.policy_version == v0  # nothing changed


def test_removing_grants_who_may(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    # bob cannot list /fin
    assert tiny_org_client.delete(f"{GRANTS}/g-fin", headers=_h(tiny_org_sim, "bob")).status_code == 404
    assert tiny_org_client.delete(f"{GRANTS}/g-eng", headers=_h(tiny_org_sim, "bob")).status_code == 403
    assert tiny_org_client.delete(f"{GRANTS}/g-eng", headers=_h(tiny_org_sim, "eval")).status_code == 403
    assert tiny_org_client.delete(f"{GRANTS}/nope", headers=_h(tiny_org_sim, "admin")).status_code == 404
    assert tiny_org_client.delete(f"{GRANTS}/g-fin", headers=_h(tiny_org_sim, "admin")).status_code == 200
    assert "budget" not in _recall(tiny_org_client, tiny_org_sim, "carol")


# ---------------------------------------------------------------------------- effective permissions
def test_effective_permissions_name_their_grants(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    r = tiny_org_client.get(EFFECTIVE, params={"path": "/eng/specs/spec1.md"}, headers=_h(tiny_org_sim, "alice"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["target"] == "document" and body["principal"]["user_id"] == "alice"
    assert body["allowed"] == ["list", "preview", "download", "upload", "edit", "delete", "share", "manage"]
    manage = next(a for a in body["actions"] if a["action"] == "manage")
    assert [(s["grant_id"], s["inherited"], s["path"], s["subject"]["kind"]) for s in manage["sources"]] == [
        ("g-alice", True, "/eng", "user")
    ]
    preview = next(a for a in body["actions"] if a["action"] == "preview")
    assert {s["grant_id"] for s in preview["sources"]} == {"g-alice", "g-eng"}
    eng = next(s for s in preview["sources"] if s["grant_id"] == "g-eng")
    assert eng["matched_as"] == "dept:eng" and eng["granted_actions"] == ["edit"]

    # bob is in eng-fe < eng
    r = tiny_org_client.get(EFFECTIVE, params={"path": "/eng/plan.md"}, headers=_h(tiny_org_sim, "bob"))
    assert r.json()["allowed"] == ["list", "preview", "download", "upload", "edit"]


def test_effective_permissions_who_may_read(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    assert (
        tiny_org_client.get(
            EFFECTIVE, params={"path": "/eng", "user_id": "bob"}, headers=_h(tiny_org_sim, "alice")
        ).status_code
        == 403
    )
    before = len(tiny_org_sim.audit)
    r = tiny_org_client.get(
        EFFECTIVE, params={"path": "/fin/budget.md", "user_id": "dave"}, headers=_h(tiny_org_sim, "eval")
    )
    assert r.status_code == 200, r.text
    preview = next(a for a in r.json()["actions"] if a["action"] == "preview")
    assert preview["allowed"] is False and preview["reason"] == "clearance"
    assert preview["sources"][0]["vetoed_by_clearance"] is True
    assert (
        tiny_org_sim.audit[before:] == [tiny_org_sim.audit[-1]] and tiny_org_sim.audit[-1]["caller"] == "svc:evaluator"
    )
    r = tiny_org_client.get(EFFECTIVE, params={"path": "/fin", "user_role": "acct"}, headers=_h(tiny_org_sim, "eval"))
    assert r.status_code == 200 and r.json()["principal"]["evaluated_as"] is True
    assert r.json()["allowed"] == []  # the role alone holds nothing on /fin (the grant is to the department)
    r = tiny_org_client.get(
        EFFECTIVE, params={"path": "/fin", "user_role": "acct", "department": "fin"}, headers=_h(tiny_org_sim, "eval")
    )
    assert r.json()["allowed"] == ["list", "preview"]
    hidden = tiny_org_client.get(EFFECTIVE, params={"path": "/fin-secret"}, headers=_h(tiny_org_sim, "bob"))
    missing = tiny_org_client.get(EFFECTIVE, params={"path": "/fin-nothing"}, headers=_h(tiny_org_sim, "bob"))
    assert hidden.status_code == missing.status_code == 404
    assert (
        tiny_org_client.get(EFFECTIVE, params={"path": "/fin-secret"}, headers=_h(tiny_org_sim, "eval")).status_code
        == 400
    )


def test_effective_permissions_as_of_judge_expiry_to_the_microsecond(
    tiny_org_client: TestClient, tiny_org_sim: Simulator
) -> None:
    # an as_of after the clock is a 400: judge both instants from after them
    tiny_org_sim.drive.clock.set(TIMES[3] + US)

    def preview_at(at) -> bool:
        r = tiny_org_client.get(
            EFFECTIVE,
            params={"path": "/fin-secret/payroll.md", "user_id": "carol", "as_of": at.isoformat()},
            headers=_h(tiny_org_sim, "eval"),
        )
        assert r.status_code == 200, r.text
        return "preview" in r.json()["allowed"]

    assert preview_at(TIMES[3] - US) is True
    assert preview_at(TIMES[3]) is False


def test_effective_over_http_equals_enforce_for_every_user_and_path(
    tiny_org_client: TestClient, tiny_org_sim: Simulator
) -> None:
    drive, engine, now = tiny_org_sim.drive, tiny_org_sim.engine, tiny_org_sim.drive.clock.now()
    targets = [(drive.folder_path(f), folder_obj(f), 0) for f in drive.folders]
    targets += [(drive.doc_path(d), doc_obj(d.doc_id), d.secret_level) for d in drive.documents.values()]
    for user in sorted(drive.users):
        p = engine.user_principal(user)
        for path, obj, level in targets:
            r = tiny_org_client.get(EFFECTIVE, params={"path": path, "user_id": user}, headers=_h(tiny_org_sim, "eval"))
            assert r.status_code == 200, r.text
            got = {a["action"]: a["allowed"] for a in r.json()["actions"]}
            assert got == {a: engine.enforce(p, obj, a, now, level) for a in got}, (user, path)


# ---------------------------------------------------------------------------- moves
def test_move_folder_re_evaluates_access_on_the_next_request(
    tiny_org_client: TestClient, tiny_org_sim: Simulator
) -> None:
    assert "spec1" in _recall(tiny_org_client, tiny_org_sim, "bob") and "spec1" not in _recall(
        tiny_org_client, tiny_org_sim, "carol"
    )
    r = tiny_org_client.post(MOVE, json={"path": "/eng/specs", "to": "/fin"}, headers=_h(tiny_org_sim, "admin"))
    assert r.status_code == 200, r.text
    assert r.json()["path"] == "/fin/specs" and r.json()["from_path"] == "/eng/specs"
    assert "spec1" not in _recall(tiny_org_client, tiny_org_sim, "bob")
    assert "spec1" in _recall(tiny_org_client, tiny_org_sim, "carol")
    r = tiny_org_client.get(
        GRANTS, params={"path": "/fin/specs/spec1.md", "inherited": True}, headers=_h(tiny_org_sim, "admin")
    )
    assert {g["grant_id"] for g in r.json()["grants"]} == {"g-fin"}


def test_move_who_may(tiny_org_client: TestClient, tiny_org_sim: Simulator) -> None:
    assert (
        tiny_org_client.post(
            MOVE, json={"path": "/eng/specs", "to": "/fin"}, headers=_h(tiny_org_sim, "alice")
        ).status_code
        == 404
    )
    assert (
        tiny_org_client.post(
            MOVE, json={"path": "/eng/specs", "to": "/archive"}, headers=_h(tiny_org_sim, "alice")
        ).status_code
        == 403
    )
    assert (
        tiny_org_client.post(
            MOVE, json={"path": "/eng/specs", "to": "/fin"}, headers=_h(tiny_org_sim, "bob")
        ).status_code
        == 403
    )
    assert (
        tiny_org_client.post(
            MOVE, json={"path": "/eng", "to": "/eng/specs"}, headers=_h(tiny_org_sim, "admin")
        ).status_code
        == 400
    )
    assert (
        tiny_org_client.post(
            MOVE, json={"path": "/eng", "to": "/eng/plan.md"}, headers=_h(tiny_org_sim, "admin")
        ).status_code
        == 400
    )
    ok = tiny_org_client.post(
        MOVE, json={"path": "/eng/plan.md", "to": "/eng/specs"}, headers=_h(tiny_org_sim, "alice")
    )
    assert ok.status_code == 200 and ok.json()["path"] == "/eng/specs/plan.md"


# ---------------------------------------------------------------------------- fail closed
def _boom(*_a: object, **_k: object) -> bool:
    raise RuntimeError("policy store unavailable")


def test_fast_path_disagreeing_with_the_enforcer_answers_503_without_results(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = tiny_org_sim.engine
    everything = engine.allowed_mask(engine.user_principal("dave"), "preview", tiny_org_sim.drive.clock.now()) | True
    monkeypatch.setattr(engine, "allowed_mask", lambda *_a, **_k: everything)  # the fast path lets all through
    r = tiny_org_client.post(
        RECALL, json={"query": "budget approval report", "top_k": 10}, headers=_h(tiny_org_sim, "dave")
    )
    assert r.status_code == 503
    assert "results" not in r.json() and r.json()["error"]["code"] == "permission-check-failed"


def test_recheck_raising_answers_503_without_results(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the per-hit re-check (compiled, proven equal to enforce)
    monkeypatch.setattr(tiny_org_sim.engine, "decide_doc", _boom)
    r = tiny_org_client.post(
        RECALL, json={"query": "budget approval report", "top_k": 10}, headers=_h(tiny_org_sim, "alice")
    )
    assert r.status_code == 503 and "results" not in r.json()


def test_fast_path_raising_answers_503_without_results(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tiny_org_sim.engine, "allowed_mask", _boom)
    r = tiny_org_client.post(
        RECALL, json={"query": "budget approval report", "top_k": 10}, headers=_h(tiny_org_sim, "alice")
    )
    assert r.status_code == 503 and "results" not in r.json()


def test_recheck_denying_what_the_fast_path_allowed_answers_503(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tiny_org_sim.engine, "decide_doc", lambda *_a, **_k: False)
    r = tiny_org_client.post(
        RECALL, json={"query": "budget approval report", "top_k": 10}, headers=_h(tiny_org_sim, "alice")
    )
    assert r.status_code == 503 and "results" not in r.json()


def test_explanation_disagreeing_with_enforce_answers_503(
    tiny_org_client: TestClient, tiny_org_sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = tiny_org_sim.engine
    real = engine.enforce
    monkeypatch.setattr(
        engine,
        "enforce",
        lambda p, obj, act, at, level=0: (
            (not real(p, obj, act, at, level)) if act == "edit" else real(p, obj, act, at, level)
        ),
    )
    r = tiny_org_client.get(EFFECTIVE, params={"path": "/eng/plan.md"}, headers=_h(tiny_org_sim, "alice"))
    assert r.status_code == 503 and "actions" not in r.json()
    monkeypatch.setattr(engine, "enforce", _boom)
    assert (
        tiny_org_client.get(EFFECTIVE, params={"path": "/eng/plan.md"}, headers=_h(tiny_org_sim, "alice")).status_code
        == 503
    )
