"""What an outside system needs to sync permissions from the drive, and a test harness to change them over HTTP:
``modified_at`` (moved by content, never by permissions), the recursive listing, who may preview what now
(``/api/v1/access``, equal to Casbin's ``enforce`` for every user and document), directory administration
(users, project memberships, folders), grant and membership expiry in the change feed, and reset."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drivebench.drive.errors import InvalidRequest
from drivebench.drive.model import MembershipRec
from drivebench.drive.permissions.compiler import doc_obj
from drivebench.drive.permissions.engine import PermissionEngine
from drivebench.simulator.backend import Simulator
from drivebench.simulator.persistence import open_durable
from tests.support.security import h
from tests.support.sims import HASH, auth, client_for, upload

F = "/api/v1/files"


# ---------------------------------------------------------------------------- helpers
def brute_force(sim: Simulator) -> dict[str, list[str]]:
    """Every document -> the users Casbin's enforce lets preview it now (nobody for a trashed one), from an
    engine compiled afresh from the drive (not the simulator's, which may be derived or held back by a fault)."""
    engine, now = PermissionEngine(sim.drive), sim.drive.clock.now()
    out = {}
    for doc_id, doc in sorted(sim.drive.documents.items()):
        out[doc_id] = (
            []
            if doc.trashed_at is not None
            else [
                u
                for u in sorted(sim.drive.users)
                if engine.enforce(engine.user_principal(u), doc_obj(doc_id), "preview", now, doc.secret_level)
            ]
        )
    return out


def access(client: TestClient, sim: Simulator, who: str = "admin", **params: str) -> dict[str, list[str]]:
    r = client.get("/api/v1/access", headers=h(sim, who), params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["at"] == _iso(sim.drive.clock.now())
    ids = [d["doc_id"] for d in body["documents"]]
    assert ids == sorted(ids)
    for d in body["documents"]:
        assert d["trashed"] == (sim.drive.documents[d["doc_id"]].trashed_at is not None)
        assert d["users"] == sorted(d["users"])
    return {d["doc_id"]: d["users"] for d in body["documents"]}


def assert_access_is_enforce(client: TestClient, sim: Simulator) -> dict[str, list[str]]:
    got = access(client, sim)
    assert got == brute_force(sim)
    return got


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def changes(client: TestClient, sim: Simulator, who: str = "admin", cursor: int = 0) -> list[dict[str, Any]]:
    r = client.get("/api/v1/changes", headers=h(sim, who), params={"cursor": cursor, "limit": 1000})
    assert r.status_code == 200, r.text
    return r.json()["changes"]


def meta(client: TestClient, sim: Simulator, doc_id: str) -> dict[str, Any]:
    r = client.get(f"{F}/{doc_id}", headers=h(sim, "admin"))
    assert r.status_code == 200, r.text
    return r.json()


def state(sim: Simulator) -> tuple[object, ...]:
    d = sim.drive
    return (
        sim.snapshot(),
        d.policy_version,
        len(d.changes),
        repr(sorted(d.users.items())),
        repr(sorted((p.id, p.members) for p in d.projects.values())),
        repr(sorted(d.folders.items())),
    )


# ---------------------------------------------------------------------------- modified_at
def test_modified_at_moves_with_content_and_placement_never_with_permissions(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    admin = h(fresh_sim, "admin")
    doc = fresh_sim.drive.documents["d0002"]
    first = meta(fresh_client, fresh_sim, "d0002")
    assert first["modified_at"] == _iso(doc.head.created_at) == first["head"]["created_at"]
    before_access = access(fresh_client, fresh_sim)["d0002"]

    # permission changes of every kind: a grant, a clearance, a department, a membership, inheritance
    grant = {"path": "/company", "subject": {"kind": "user", "id": "u012"}, "actions": ["preview"], "effect": "deny"}
    assert fresh_client.post("/api/permissions/grants", headers=admin, json=grant).status_code == 201
    assert fresh_client.patch("/api/v1/users/u001", headers=admin, json={"clearance": "public"}).status_code == 200
    assert fresh_client.patch("/api/v1/users/u009", headers=admin, json={"department": "hr"}).status_code == 200
    assert fresh_client.delete("/api/v1/projects/px/members/u001", headers=admin).status_code == 200
    r = fresh_client.patch("/api/v1/folders", headers=admin, json={"path": "/company", "break_inheritance": True})
    assert r.status_code == 200
    assert access(fresh_client, fresh_sim)["d0002"] != before_access  # they took effect...
    assert (
        meta(fresh_client, fresh_sim, "d0002")["modified_at"] == first["modified_at"]
    )  # ...and never moved modified_at
    listed = fresh_client.get(F, params={"folder": "/company"}, headers=admin).json()["files"]
    assert next(f for f in listed if f["doc_id"] == "d0002")["modified_at"] == first["modified_at"]

    steps = []
    r = fresh_client.post(f"{F}/d0002/versions", headers=admin, files={"file": ("x.md", b"# v3\nmodified-marker")})
    assert r.status_code == 201
    steps.append(meta(fresh_client, fresh_sim, "d0002"))
    assert steps[-1]["modified_at"] == r.json()["created_at"]
    assert fresh_client.patch(f"{F}/d0002", headers=admin, json={"name": "renamed.pdf"}).status_code == 200
    steps.append(meta(fresh_client, fresh_sim, "d0002"))
    assert fresh_client.patch(f"{F}/d0002", headers=admin, json={"folder": "/rd"}).status_code == 200
    steps.append(meta(fresh_client, fresh_sim, "d0002"))
    assert fresh_client.post(f"{F}/d0002/trash", headers=admin).status_code == 200
    steps.append(meta(fresh_client, fresh_sim, "d0002"))
    assert steps[-1]["modified_at"] == steps[-1]["trashed_at"]
    assert fresh_client.post(f"{F}/d0002/untrash", headers=admin).status_code == 200
    steps.append(meta(fresh_client, fresh_sim, "d0002"))
    times = [first["modified_at"]] + [s["modified_at"] for s in steps]
    assert times == sorted(times) and len(set(times)) == len(times), times  # each step moved it forward
    # a folder moving above the document changes its path, not the document itself
    before = meta(fresh_client, fresh_sim, "d0010")["modified_at"]
    r = fresh_client.post("/api/permissions/move", headers=admin, json={"path": "/rd/platform", "to": "/it"})
    assert r.status_code == 200, r.text
    moved = meta(fresh_client, fresh_sim, "d0010")
    assert moved["path"].startswith("/it/platform/") and moved["modified_at"] == before


# ---------------------------------------------------------------------------- recursive listing
def test_recursive_listing_covers_the_subtree_through_the_callers_visibility(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    def listing(who: str, **params: str) -> list[dict[str, Any]]:
        r = fresh_client.get(F, headers=h(fresh_sim, who), params=params)
        assert r.status_code == 200, r.text
        return r.json()["files"]

    under_rd = {d for d, doc in fresh_sim.drive.documents.items() if fresh_sim.drive.doc_path(doc).startswith("/rd/")}
    flat = listing("admin", folder="/rd")
    deep = listing("admin", folder="/rd", recursive="true")
    assert {f["doc_id"] for f in flat} == {"d0005", "d0006", "d0007", "d0008"}  # the default: one folder only
    assert [f["name"] for f in flat] == sorted(f["name"] for f in flat)
    assert {f["doc_id"] for f in deep} == under_rd and len(deep) == len(under_rd) > len(flat)
    assert [f["path"] for f in deep] == sorted((f["path"] for f in deep), key=lambda p: p.rpartition("/"))
    everything = listing("admin", folder="/", recursive="true")
    assert {f["doc_id"] for f in everything} == {
        d for d, x in fresh_sim.drive.documents.items() if x.trashed_at is None
    }

    # a user: only what they may list (d0008 is secret, above u001's clearance)
    engine, now = fresh_sim.engine, fresh_sim.drive.clock.now()
    p = engine.user_principal("u001")
    mine = {f["doc_id"] for f in listing("u001", folder="/rd", recursive="true")}
    assert (
        mine
        == {
            d for d in under_rd if engine.enforce(p, doc_obj(d), "list", now, fresh_sim.drive.documents[d].secret_level)
        }
        and "d0008" not in mine
    )
    assert (
        fresh_client.get(F, headers=h(fresh_sim, "u012"), params={"folder": "/rd", "recursive": "true"}).status_code
        == 404
    )

    # the trash: trashed documents of the subtree only with trashed=true
    assert fresh_client.post(f"{F}/d0010/trash", headers=h(fresh_sim, "admin")).status_code == 200
    assert "d0010" not in {f["doc_id"] for f in listing("admin", folder="/rd", recursive="true")}
    assert [f["doc_id"] for f in listing("admin", folder="/rd", recursive="true", trashed="true")] == ["d0010"]
    assert listing("admin", folder="/rd", trashed="true") == []  # not in /rd itself


# ---------------------------------------------------------------------------- access
def test_access_is_casbins_decision_for_the_admin_and_the_evaluation_token(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    truth = brute_force(fresh_sim)
    assert access(fresh_client, fresh_sim, "admin") == access(fresh_client, fresh_sim, "eval") == truth
    assert truth["d0014"] == ["u001", "u002", "u003", "u005", "u010"]  # project X members (u007's membership ended)
    assert "u010" not in truth["d0009"]  # the deny on d0009
    for doc_id in ("d0001", "d0008", "d0014", "d0023"):
        r = fresh_client.get(f"{F}/{doc_id}/access", headers=h(fresh_sim, "eval"))
        assert r.status_code == 200, r.text
        assert r.json() == {
            "doc_id": doc_id,
            "at": _iso(fresh_sim.drive.clock.now()),
            "users": truth[doc_id],
            "trashed": False,
        }
    under = access(fresh_client, fresh_sim, folder="/finance")
    assert set(under) == {"d0017", "d0018", "d0019", "d0020", "d0028"}
    assert all(under[d] == truth[d] for d in under)
    assert access(fresh_client, fresh_sim, folder="/finance/")["d0020"] == truth["d0020"]

    # refusals: a user token, no token, unknown ids and folders, a malformed path
    for url in (f"{F}/d0001/access", "/api/v1/access"):
        r = fresh_client.get(url, headers=h(fresh_sim, "u004"))
        assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
        assert fresh_client.get(url).status_code == 401
    assert fresh_client.get(f"{F}/d9999/access", headers=h(fresh_sim, "admin")).status_code == 404
    assert (
        fresh_client.get("/api/v1/access", headers=h(fresh_sim, "admin"), params={"folder": "/nope"}).status_code == 404
    )
    relative = fresh_client.get("/api/v1/access", headers=h(fresh_sim, "admin"), params={"folder": "rd"})
    assert relative.status_code == 422 and relative.json()["error"]["fields"] == ["query.folder"]  # the schema's ^/


def test_access_of_trashed_and_brand_new_documents(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    assert fresh_client.post(f"{F}/d0001/trash", headers=h(fresh_sim, "admin")).status_code == 200
    r = fresh_client.get(f"{F}/d0001/access", headers=h(fresh_sim, "admin")).json()
    assert r["users"] == [] and r["trashed"] is True
    assert access(fresh_client, fresh_sim)["d0001"] == []  # still listed
    up = upload(fresh_client, fresh_sim, "u009", "/it", "sync.md", b"# sync\nnew document")
    assert up.status_code == 201
    new = up.json()["doc_id"]
    assert assert_access_is_enforce(fresh_client, fresh_sim)[new] == ["u009"]  # dept it: manage on /it
    # written straight into the drive, newer than the engine: still judged by an engine that knows it
    engine = fresh_sim.engine
    doc = fresh_sim.drive.create_document(
        fresh_sim.drive.folder_by_path("/company").folder_id, "fresh.md", b"# fresh", file_type="md", secret_level=0
    )
    assert doc.doc_id not in engine.doc_index
    got = fresh_client.get(f"{F}/{doc.doc_id}/access", headers=h(fresh_sim, "eval")).json()
    assert got["users"] == sorted(fresh_sim.drive.users)  # everyone may download /company, public level
    assert assert_access_is_enforce(fresh_client, fresh_sim)[doc.doc_id] == got["users"]


# ---------------------------------------------------------------------------- directory administration
def test_moving_a_user_to_another_department(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    before = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u005" in before["d0028"] and "u005" not in before["d0022"]
    version = fresh_sim.drive.policy_version
    r = fresh_client.patch("/api/v1/users/u005", headers=h(fresh_sim, "admin"), json={"department": "hr"})
    assert r.status_code == 200, r.text
    assert r.json() == {"user_id": "u005", "department": "hr", "clearance": "confidential", "roles": ["finance"]}
    after = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u005" not in after["d0028"] and "u005" in after["d0022"]  # left finance's grants, reached hr's
    assert fresh_sim.drive.policy_version > version
    last = changes(fresh_client, fresh_sim)[-1]
    assert last["kind"] == "acl_changed" and last["detail"] == "department of u005" and last["actor"] == "svc:admin"


def test_lowered_clearance_and_new_roles(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    before = assert_access_is_enforce(fresh_client, fresh_sim)
    assert {"d0019", "d0020", "d0021", "d0017"} <= {d for d, users in before.items() if "u004" in users}
    r = fresh_client.patch("/api/v1/users/u004", headers=h(fresh_sim, "admin"), json={"clearance": "internal"})
    assert r.status_code == 200 and r.json()["clearance"] == "internal"
    lowered = assert_access_is_enforce(fresh_client, fresh_sim)
    for doc_id in ("d0019", "d0020", "d0021"):  # confidential documents
        assert "u004" not in lowered[doc_id], doc_id
    assert "u004" in lowered["d0017"]  # an internal one stays
    r = fresh_client.patch(
        "/api/v1/users/u004",
        headers=h(fresh_sim, "admin"),
        json={"clearance": "secret", "roles": ["finance", "manager"]},
    )
    assert r.status_code == 200 and r.json()["roles"] == ["finance", "manager"]
    after = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u004" in after["d0019"]  # /finance's department grant, confidential: back with the clearance
    assert "u004" not in after["d0020"] and "u004" not in after["d0021"]  # only through the finance_manager role
    details = [c["detail"] for c in changes(fresh_client, fresh_sim)]
    assert details == ["clearance of u004", "clearance of u004", "roles of u004"]


def test_breaking_and_restoring_inheritance(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    before = assert_access_is_enforce(fresh_client, fresh_sim)
    assert f"fld:{fresh_sim.drive.folder_by_path('/rd').folder_id}" in fresh_sim.engine.object_ancestors(
        doc_obj("d0010")
    )
    assert {"u001", "u010"} <= set(before["d0010"])
    body = {"path": "/rd/platform", "break_inheritance": True}
    r = fresh_client.patch("/api/v1/folders", headers=h(fresh_sim, "admin"), json=body)
    fid = fresh_sim.drive.folder_by_path("/rd/platform").folder_id
    assert r.status_code == 200 and r.json() == {"folder_id": fid, "path": "/rd/platform", "break_inheritance": True}
    broken = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u001" not in broken["d0010"]  # the /rd department grant no longer reaches it
    assert "u010" in broken["d0010"]  # the grant on /rd/platform itself stays
    rd = fresh_sim.drive.folder_by_path("/rd").folder_id
    assert f"fld:{rd}" not in fresh_sim.engine.object_ancestors(doc_obj("d0010"))  # the g2 link to /rd is gone
    last = changes(fresh_client, fresh_sim)[-1]
    assert last["kind"] == "acl_changed" and last["folder_id"] == fid and "broken" in last["detail"]
    # the same value again changes nothing; restoring brings the parent's grants back
    n = len(fresh_sim.drive.changes)
    assert fresh_client.patch("/api/v1/folders", headers=h(fresh_sim, "admin"), json=body).status_code == 200
    assert len(fresh_sim.drive.changes) == n
    body["break_inheritance"] = False
    assert (
        fresh_client.patch("/api/v1/folders", headers=h(fresh_sim, "admin"), json=body).json()["break_inheritance"]
        is False
    )
    assert assert_access_is_enforce(fresh_client, fresh_sim) == before
    assert changes(fresh_client, fresh_sim)[-1]["detail"] == "inheritance of /rd/platform restored"


def test_ending_a_project_membership(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    before = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u005" in before["d0013"]  # finance: project X only through the membership
    then = fresh_sim.drive.clock.now()
    r = fresh_client.delete("/api/v1/projects/px/members/u005", headers=h(fresh_sim, "admin"))
    assert r.status_code == 200, r.text
    now = fresh_sim.drive.clock.now()
    assert r.json() == {
        "project_id": "px",
        "user_id": "u005",
        "role": "member",
        "valid_from": "2026-05-15T00:00:00Z",
        "valid_until": _iso(now),
    }
    after = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u005" not in after["d0013"] and "u005" in after["d0017"]  # project grant gone, department's stays
    assert changes(fresh_client, fresh_sim)[-1]["detail"] == "membership of u005 in px ended"
    # as_of before the end still sees the member (the evaluation token replays decisions in force then)
    path = fresh_sim.drive.doc_path(fresh_sim.drive.documents["d0013"])
    params = {"path": path, "user_id": "u005", "as_of": then.isoformat()}
    was = fresh_client.get("/api/permissions/effective", headers=h(fresh_sim, "eval"), params=params).json()
    assert "preview" in was["allowed"]
    params["as_of"] = now.isoformat()
    assert (
        "preview"
        not in fresh_client.get("/api/permissions/effective", headers=h(fresh_sim, "eval"), params=params).json()[
            "allowed"
        ]
    )
    # no current membership any more, or never one: 404
    assert fresh_client.delete("/api/v1/projects/px/members/u005", headers=h(fresh_sim, "admin")).status_code == 404
    assert (
        fresh_client.delete("/api/v1/projects/px/members/u007", headers=h(fresh_sim, "admin")).status_code == 404
    )  # ended
    assert fresh_client.delete("/api/v1/projects/nope/members/u001", headers=h(fresh_sim, "admin")).status_code == 404


def test_creating_folders(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    admin = h(fresh_sim, "admin")
    r = fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/new-team"})
    assert r.status_code == 201, r.text
    open_id = r.json()["folder_id"]
    assert r.json() == {"folder_id": open_id, "path": "/rd/new-team", "break_inheritance": False}
    r = fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/closed/", "break_inheritance": True})
    assert r.status_code == 201 and r.json()["path"] == "/rd/closed" and r.json()["break_inheritance"] is True
    assert [c["kind"] for c in changes(fresh_client, fresh_sim)] == ["created", "created"]
    assert changes(fresh_client, fresh_sim)[0]["folder_id"] == open_id
    inherited = upload(fresh_client, fresh_sim, "admin", "/rd/new-team", "a.md", b"# a\nteam notes").json()["doc_id"]
    closed = upload(fresh_client, fresh_sim, "admin", "/rd/closed", "b.md", b"# b\nclosed notes").json()["doc_id"]
    got = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u001" in got[inherited] and got[closed] == []  # /rd's grants reach one, not the other
    # the folder exists, the parent does not, the path is no path
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/new-team"}).status_code == 409
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/"}).status_code == 409
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/nope/x"}).status_code == 404
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "rd/x"}).status_code == 422
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/.."}).status_code == 400


def test_directory_refusals_change_nothing(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    before = state(fresh_sim)
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("PATCH", "/api/v1/users/u001", {"department": "finance"}),
        ("DELETE", "/api/v1/projects/px/members/u001", None),
        ("POST", "/api/v1/folders", {"path": "/rd/x"}),
        ("PATCH", "/api/v1/folders", {"path": "/rd", "break_inheritance": True}),
    ]
    for method, url, body in calls:
        assert fresh_client.request(method, url, json=body).status_code == 401, url
        for who in ("u003", "u009", "eval"):
            r = fresh_client.request(method, url, json=body, headers=h(fresh_sim, who))
            assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden", (url, who)
    admin = h(fresh_sim, "admin")
    bad_users = [
        ({}, 422),
        ({"department": None}, 422),
        ({"clearance": "top-secret"}, 422),
        ({"roles": ["a b"]}, 422),
        ({"roles": "engineer"}, 422),
        ({"department": "rd", "extra": 1}, 422),
        ({"department": "nope"}, 400),
        ({"clearance": "public", "department": "nope"}, 400),  # one bad field: the good one is not applied
    ]
    for body, status in bad_users:
        r = fresh_client.patch("/api/v1/users/u001", headers=admin, json=body)
        assert r.status_code == status, (body, r.text)
    assert fresh_client.patch("/api/v1/users/u999", headers=admin, json={"department": "rd"}).status_code == 404
    assert fresh_client.patch("/api/v1/folders", headers=admin, json={"path": "/rd"}).status_code == 422
    bad = {"path": "/rd", "break_inheritance": "yes"}
    assert fresh_client.patch("/api/v1/folders", headers=admin, json=bad).status_code == 422
    assert (
        fresh_client.patch("/api/v1/folders", headers=admin, json={"path": "/", "break_inheritance": True}).status_code
        == 400
    )
    missing = {"path": "/nope", "break_inheritance": True}
    assert fresh_client.patch("/api/v1/folders", headers=admin, json=missing).status_code == 404
    assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/x", "mode": 1}).status_code == 422
    assert state(fresh_sim) == before
    # the drive refuses a bad field of a multi-field update as a whole, too
    with pytest.raises(InvalidRequest):
        fresh_sim.drive.update_user("u001", department="finance", roles=["bad role"])
    assert state(fresh_sim) == before


def test_grants_api_takes_deny_and_valid_until(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    until = fresh_sim.drive.clock.now() + timedelta(days=1)
    grant = {
        "path": "/rd/Code Review Guidelines.md",
        "subject": {"kind": "user", "id": "u001"},
        "actions": ["preview"],
        "effect": "deny",
        "valid_until": until.isoformat(),
        "grant_id": "g-deny",
    }
    r = fresh_client.post("/api/permissions/grants", headers=h(fresh_sim, "admin"), json=grant)
    assert r.status_code == 201, r.text
    assert r.json()["grant"]["effect"] == "deny" and r.json()["grant"]["valid_until"] == _iso(until)
    assert "u001" not in assert_access_is_enforce(fresh_client, fresh_sim)["d0007"]
    assert fresh_client.post("/_sim/clock/advance", headers=h(fresh_sim, "admin"), json={"days": 2}).status_code == 200
    assert "u001" in assert_access_is_enforce(fresh_client, fresh_sim)["d0007"]  # the deny expired
    ended = [c for c in changes(fresh_client, fresh_sim) if c["grant_id"] == "g-deny"]
    assert [c["detail"] for c in ended] == [None, "grant g-deny ended"]
    assert ended[1]["doc_id"] == "d0007" and ended[1]["at"] == _iso(until)


# ---------------------------------------------------------------------------- time-based changes in the feed
def test_clock_moves_record_grant_and_membership_bounds(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    admin = h(fresh_sim, "admin")
    now = fresh_sim.drive.clock.now()
    legal = fresh_sim.drive.folder_by_path("/legal").folder_id
    soon, later = now + timedelta(hours=2), now + timedelta(days=3)
    for gid, bounds in (("g-temp", {"valid_until": soon.isoformat()}), ("g-next", {"valid_from": later.isoformat()})):
        who = "u009" if gid == "g-temp" else "u011"
        grant = {"path": "/legal", "subject": {"kind": "user", "id": who}, "actions": ["preview"], "grant_id": gid}
        assert fresh_client.post("/api/permissions/grants", headers=admin, json={**grant, **bounds}).status_code == 201
    # a membership that ends on its own (set up directly in the drive: the API only ends memberships now)
    fresh_sim.drive.projects["px"].members.append(MembershipRec("u008", "external", None, now + timedelta(days=1)))
    fresh_sim.drive.bump_policy()
    before = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u009" in before["d0025"] and "u011" not in before["d0026"] and "u008" in before["d0013"]
    cursor = len(fresh_sim.drive.changes)
    # a user's cursors are its own opaque numbers (they count nothing hidden): u011's latest before the move
    mark = fresh_client.get("/api/v1/changes", headers=h(fresh_sim, "u011"), params={"limit": 1}).json()[
        "latest_cursor"
    ]
    version = fresh_sim.drive.policy_version

    r = fresh_client.post("/_sim/clock/advance", headers=admin, json={"days": 4})
    assert r.status_code == 200
    feed = changes(fresh_client, fresh_sim, cursor=cursor)
    assert [(c["kind"], c["detail"]) for c in feed] == [
        ("acl_changed", "grant g-temp ended"),
        ("acl_changed", "membership of u008 in px ended"),
        ("acl_changed", "grant g-next began"),
    ]
    assert [c["at"] for c in feed] == [_iso(soon), _iso(now + timedelta(days=1)), _iso(later)]  # time order
    assert feed[0]["grant_id"] == "g-temp" and feed[0]["folder_id"] == legal and feed[0]["doc_id"] is None
    assert feed[1]["grant_id"] is None and feed[1]["folder_id"] is None
    assert fresh_sim.drive.policy_version == version  # the bounds were compiled already: no new policy
    after = assert_access_is_enforce(fresh_client, fresh_sim)
    assert "u009" not in after["d0025"] and "u011" in after["d0026"] and "u008" not in after["d0013"]
    # visibility: the membership entry is the admin's only; u011 sees the grant by which it now lists /legal
    mine = changes(fresh_client, fresh_sim, "u011", cursor=mark)
    assert [c["detail"] for c in mine] == ["grant g-next began"]
    # nothing recorded twice: not for a move back to the latest change and forward again
    n = len(fresh_sim.drive.changes)
    fresh_client.post("/_sim/clock/advance", headers=admin, json={"days": 400})  # past g15's end (2027-01-01)
    assert [c["detail"] for c in changes(fresh_client, fresh_sim, cursor=n)] == ["grant g15 ended"]
    n = len(fresh_sim.drive.changes)
    assert fresh_client.put("/_sim/clock", headers=admin, json={"now": "2026-12-31T00:00:00+00:00"}).status_code == 409
    for when in ("2027-01-01T00:00:00+00:00", "2031-01-01T00:00:00+00:00"):
        assert fresh_client.put("/_sim/clock", headers=admin, json={"now": when}).status_code == 200
    assert len(fresh_sim.drive.changes) == n


# ---------------------------------------------------------------------------- fingerprint and reset
def test_every_change_moves_the_fingerprint_and_reset_restores_it(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    admin = h(fresh_sim, "admin")
    loaded = fresh_client.get("/_sim/stats", headers=admin).json()["snapshot"]
    original = state(fresh_sim)[3:]
    steps = [
        ("PATCH", "/api/v1/users/u001", {"department": "finance"}),
        ("PATCH", "/api/v1/users/u001", {"clearance": "public"}),
        ("PATCH", "/api/v1/users/u001", {"roles": ["engineer", "manager"]}),
        ("DELETE", "/api/v1/projects/px/members/u002", None),
        ("POST", "/api/v1/folders", {"path": "/rd/sync"}),
        ("PATCH", "/api/v1/folders", {"path": "/rd/platform", "break_inheritance": True}),
        ("PUT", "/_sim/clock", {"now": "2027-01-02T00:00:00+00:00"}),  # g15 ends on the way
    ]
    prints = [loaded]
    for method, url, body in steps:
        r = fresh_client.request(method, url, json=body, headers=admin)
        assert r.status_code in (200, 201), (url, r.text)
        prints.append(fresh_client.get("/_sim/stats", headers=admin).json()["snapshot"])
    assert len(set(prints)) == len(prints), "every change yields a new fingerprint"
    assert fresh_client.post("/_sim/reset", headers=admin).status_code == 200
    assert fresh_client.get("/_sim/stats", headers=admin).json()["snapshot"] == loaded
    assert state(fresh_sim)[3:] == original  # users, memberships, folders as loaded
    assert fresh_sim.drive.users["u001"].department == "rd" and "/rd/sync" not in {
        fresh_sim.drive.folder_path(f) for f in fresh_sim.drive.folders
    }


def test_directory_changes_are_durable(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    fresh_sim = open_durable(data_dir, "seed", HASH, start_saver=False)
    try:
        fresh_client = client_for(fresh_sim)
        admin = auth(fresh_sim, "admin")
        assert fresh_client.patch("/api/v1/users/u005", headers=admin, json={"department": "hr"}).status_code == 200
        assert fresh_client.delete("/api/v1/projects/px/members/u001", headers=admin).status_code == 200
        assert fresh_client.post("/api/v1/folders", headers=admin, json={"path": "/rd/d"}).status_code == 201
        body = {"path": "/rd/platform", "break_inheritance": True}
        assert fresh_client.patch("/api/v1/folders", headers=admin, json=body).status_code == 200
        assert (
            fresh_client.put("/_sim/clock", headers=admin, json={"now": "2027-02-01T00:00:00+00:00"}).status_code == 200
        )
        saved, feed, prints = state(fresh_sim)[1:], list(fresh_sim.drive.changes), fresh_sim.snapshot()
    finally:
        fresh_sim.close()
    again = open_durable(data_dir, "seed", HASH, start_saver=False)
    try:
        assert state(again)[1:] == saved and again.drive.changes == feed and again.snapshot() == prints
        assert again.drive.projects["px"].members[2].valid_until is not None  # u001's ended membership
    finally:
        again.close()


def test_openapi_documents_the_sync_api(fresh_client: TestClient) -> None:
    spec = fresh_client.get("/openapi.json").json()
    paths = spec["paths"]
    expected = {
        "/api/v1/access": {"get"},
        "/api/v1/files/{doc_id}/access": {"get"},
        "/api/v1/users/{user_id}": {"patch"},
        "/api/v1/projects/{project_id}/members/{user_id}": {"delete"},
        "/api/v1/folders": {"post", "patch"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path
        for method in methods:
            assert {"401", "403"} <= set(paths[path][method]["responses"]), (path, method)
    listing = {p["name"] for p in paths["/api/v1/files"]["get"]["parameters"]}
    assert {"folder", "trashed", "recursive"} <= listing
    schemas = spec["components"]["schemas"]
    assert "modified_at" in schemas["FileOut"]["required"]
    assert schemas["UserPatchIn"]["additionalProperties"] is False


def test_access_is_the_truth_while_a_fault_holds_recall_on_an_older_policy(
    fresh_client: TestClient, fresh_sim: Simulator
) -> None:
    fresh_sim.faults.enable("stale-acl", delay_s=3600, clock="sim")
    assert "u005" in access(fresh_client, fresh_sim)["d0013"]
    r = fresh_client.delete("/api/v1/projects/px/members/u005", headers=h(fresh_sim, "admin"))
    assert r.status_code == 200
    assert fresh_sim.engine.policy_version < fresh_sim.drive.policy_version  # recall is served the old policy...
    assert "u005" not in assert_access_is_enforce(fresh_client, fresh_sim)["d0013"]  # ...the access listing is not
    fresh_sim.faults.clear()


def test_departments_are_created_by_the_admin_only_and_reset_removes_them(fresh_sim, fresh_client) -> None:
    """``POST /api/v1/departments``: a new department below another; a user moved into it reaches the
    ancestors' grants; refusals change nothing; reset forgets it."""
    from tests.support.sims import auth

    fresh_sim, fresh_client = fresh_sim, fresh_client
    url = "/api/v1/departments"
    made = fresh_client.post(url, json={"id": "rd-deep", "parent": "rd"}, headers=auth(fresh_sim, "admin"))
    assert made.status_code == 201 and made.json() == {"id": "rd-deep", "name": "rd-deep", "parent": "rd"}
    assert fresh_client.post(url, json={"id": "rd-deep"}, headers=auth(fresh_sim, "admin")).status_code == 409
    assert (
        fresh_client.post(url, json={"id": "x1", "parent": "nope"}, headers=auth(fresh_sim, "admin")).status_code == 400
    )
    assert fresh_client.post(url, json={"id": "bad id!"}, headers=auth(fresh_sim, "admin")).status_code == 422
    assert fresh_client.post(url, json={"id": "x2"}, headers=auth(fresh_sim, "u001")).status_code == 403
    assert set(fresh_sim.drive.departments) >= {"rd-deep"} and not {"x1", "x2"} & set(fresh_sim.drive.departments)
    # u004 moved below rd reaches the grants to rd (Casbin's role links follow the new department)
    assert "dept:rd" not in fresh_sim.engine.subjects_of(fresh_sim.engine.user_principal("u004"))
    moved = fresh_client.patch("/api/v1/users/u004", json={"department": "rd-deep"}, headers=auth(fresh_sim, "admin"))
    assert moved.status_code == 200
    assert {"dept:rd-deep", "dept:rd"} <= fresh_sim.engine.subjects_of(fresh_sim.engine.user_principal("u004"))
    fresh_sim.reset()
    assert "rd-deep" not in fresh_sim.drive.departments
