"""Finding 2: no existence oracles. For a user, a document or folder they may not list answers exactly
like a missing one: a name conflict with it, a folder filter on it, a lookup of it, a file type only it has."""

from __future__ import annotations

from fastapi.testclient import TestClient

from drivebench.drive.model import GrantRec
from drivebench.simulator.backend import Simulator
from tests.support.security import h

HIDDEN_NAME = "核心推荐算法专利技术交底书.pdf"  # d0008 in /rd: secret, u001 (internal clearance) may not list it


def _edit_on_rd(sim: Simulator) -> None:
    sim.drive.add_grant(
        GrantRec("g-edit", "user:u001", ["edit"], "allow", folder_id=sim.drive.folder_by_path("/rd").folder_id)
    )


def _upload(client: TestClient, sim: Simulator, name: str):
    return client.post(
        "/api/v1/files", headers=h(sim, "u001"), files={"file": (name, b"# notes\n")}, data={"folder": "/rd"}
    )


def test_uploading_a_name_only_a_hidden_document_holds_is_no_conflict(
    module_client: TestClient, module_sim: Simulator
) -> None:
    _edit_on_rd(module_sim)
    assert "d0008" not in {
        d["doc_id"]
        for d in module_client.get("/api/v1/files", params={"folder": "/rd"}, headers=h(module_sim, "u001")).json()[
            "files"
        ]
    }
    hidden = _upload(module_client, module_sim, HIDDEN_NAME)
    missing = _upload(module_client, module_sim, "a-name-nobody-uses.pdf")
    assert hidden.status_code == missing.status_code == 201, (hidden.text, missing.text)
    assert set(hidden.json()) == set(missing.json())
    assert hidden.json()["path"] == f"/rd/{HIDDEN_NAME}" and hidden.json()["doc_id"] != "d0008"
    # a name the user can see is still a conflict, and the admin (who sees both) still gets 409 for a third
    assert _upload(module_client, module_sim, "Code Review Guidelines.md").status_code == 409
    admin = module_client.post(
        "/api/v1/files", headers=h(module_sim, "admin"), files={"file": (HIDDEN_NAME, b"x")}, data={"folder": "/rd"}
    )
    assert admin.status_code == 409
    assert module_sim.drive.documents["d0008"].name == HIDDEN_NAME  # the hidden document is untouched


def test_renaming_onto_a_hidden_name_is_no_conflict(module_client: TestClient, module_sim: Simulator) -> None:
    _edit_on_rd(module_sim)
    r = module_client.patch("/api/v1/files/d0007", json={"name": HIDDEN_NAME}, headers=h(module_sim, "u001"))
    assert r.status_code == 200, r.text
    r = module_client.patch("/api/v1/files/d0005", json={"name": HIDDEN_NAME}, headers=h(module_sim, "u001"))
    assert r.status_code == 409  # now the user's own document holds it


def test_folder_filter_on_a_hidden_folder_answers_like_a_missing_one(
    module_client: TestClient, module_sim: Simulator
) -> None:
    def ask(folder: str):
        body = {"query": "预算", "filters": {"folder": folder}}
        return module_client.post("/api/mcp/recall", json=body, headers=h(module_sim, "u001"))

    hidden, missing = ask("/finance-secret"), ask("/finance-nothin")
    assert hidden.status_code == missing.status_code == 400
    assert hidden.json()["error"]["message"].replace("/finance-secret", "X") == missing.json()["error"][
        "message"
    ].replace("/finance-nothin", "X")
    assert ask("/rd").status_code == 200
    # the evaluation token acting as a finance manager may filter on it
    body = {"query": "预算", "user_id": "u004", "filters": {"folder": "/finance-secret"}}
    assert module_client.post("/api/mcp/recall", json=body, headers=h(module_sim, "eval")).status_code == 200


def test_file_type_filter_does_not_tell_which_types_exist(module_client: TestClient, module_sim: Simulator) -> None:
    """The only xlsx is hidden from u012 and there is no dxf: both must answer alike (200, no results)."""
    for types in (["xlsx"], ["dxf"]):
        r = module_client.post(
            "/api/mcp/recall", json={"query": "预算", "filters": {"file_types": types}}, headers=h(module_sim, "u012")
        )
        assert r.status_code == 200 and r.json()["results"] == [], (types, r.text)
    r = module_client.post(
        "/api/mcp/recall", json={"query": "x", "filters": {"file_types": ["exe"]}}, headers=h(module_sim, "u012")
    )
    assert r.status_code == 400  # a type the drive does not know cannot be applied


def test_lookups_of_hidden_and_missing_items_are_identical(module_client: TestClient, module_sim: Simulator) -> None:
    def shape(r):
        body = r.json()
        return (
            r.status_code,
            sorted(body),
            body["error"]["code"],
            body["error"]["message"].replace("d0008", "ID").replace("d9999", "ID"),
        )

    for path in ("/api/v1/files/{}", "/api/v1/files/{}/versions", "/api/v1/files/{}/content"):
        assert shape(module_client.get(path.format("d0008"), headers=h(module_sim, "u001"))) == shape(
            module_client.get(path.format("d9999"), headers=h(module_sim, "u001"))
        )
    for params in ({"path": "/rd/" + HIDDEN_NAME}, {"path": "/rd/none.pdf"}):
        r = module_client.get("/api/permissions/effective", params=params, headers=h(module_sim, "u001"))
        assert r.status_code == 404


def _manage_on_rd(sim: Simulator) -> None:
    sim.drive.add_grant(
        GrantRec("g-manage", "user:u001", ["manage"], "allow", folder_id=sim.drive.folder_by_path("/rd").folder_id)
    )


def test_a_path_shared_with_a_hidden_namesake_is_the_callers_own_document(
    module_client: TestClient, module_sim: Simulator
) -> None:
    """u001 uploads a file under the name a hidden document holds: every path lookup of u001's resolves to
    u001's file (effective, grants by path), and the admin, who sees both, gets a 409 naming both ids."""
    _manage_on_rd(module_sim)
    up = _upload(module_client, module_sim, HIDDEN_NAME)
    assert up.status_code == 201, up.text
    mine = up.json()["doc_id"]
    path = f"/rd/{HIDDEN_NAME}"

    eff = module_client.get("/api/permissions/effective", params={"path": path}, headers=h(module_sim, "u001"))
    fresh = module_client.get(
        "/api/permissions/effective", params={"path": "/rd/Code Review Guidelines.md"}, headers=h(module_sim, "u001")
    )
    assert eff.status_code == fresh.status_code == 200, (eff.text, fresh.text)
    assert "d0008" not in eff.text

    def grant(who: str):
        body = {"path": path, "subject": {"kind": "user", "id": "u002"}, "actions": ["preview"]}
        return module_client.post("/api/permissions/grants", json=body, headers=h(module_sim, who))

    before = dict(module_sim.drive.grants)
    admin = grant("admin")
    assert admin.status_code == 409, admin.text
    assert "d0008" in admin.text and mine in admin.text
    assert module_sim.drive.grants == before  # a refused request changes nothing
    own = grant("u001")
    assert own.status_code == 201, own.text
    added = [g for g in module_sim.drive.grants.values() if g.grant_id not in before]
    assert [(g.doc_id, g.subject) for g in added] == [(mine, "user:u002")]
    assert "d0008" not in module_sim.engine.user_principal("u002").subject  # sanity: u002 is a plain user
    listing = module_client.get("/api/permissions/grants", params={"path": path}, headers=h(module_sim, "u001"))
    assert listing.status_code == 200 and "d0008" not in listing.text, listing.text


def test_moving_onto_a_hidden_documents_path_is_no_conflict(module_client: TestClient, module_sim: Simulator) -> None:
    """A move (drive API, and the permissions API's move) into a folder where only a hidden document holds
    the name answers like a free name; the admin, who sees it, gets 409."""
    _manage_on_rd(module_sim)
    up = _upload(module_client, module_sim, HIDDEN_NAME)  # u001's own namesake of d0008, then moved out and back
    mine = up.json()["doc_id"]
    module_sim.drive.add_grant(
        GrantRec("g-hr", "user:u001", ["manage"], "allow", folder_id=module_sim.drive.folder_by_path("/hr").folder_id)
    )
    module_sim.sync_index()
    out = module_client.patch(f"/api/v1/files/{mine}", json={"folder": "/hr"}, headers=h(module_sim, "u001"))
    assert out.status_code == 200, out.text
    back = module_client.patch(f"/api/v1/files/{mine}", json={"folder": "/rd"}, headers=h(module_sim, "u001"))
    assert back.status_code == 200, back.text
    module_client.patch(f"/api/v1/files/{mine}", json={"folder": "/hr"}, headers=h(module_sim, "u001"))
    moved = module_client.post(
        "/api/permissions/move", json={"path": f"/hr/{HIDDEN_NAME}", "to": "/rd"}, headers=h(module_sim, "u001")
    )
    assert moved.status_code == 200, moved.text
    assert module_sim.drive.documents[mine].folder_id == module_sim.drive.documents["d0008"].folder_id
    clash = module_client.patch("/api/v1/files/d0005", json={"name": HIDDEN_NAME}, headers=h(module_sim, "admin"))
    assert clash.status_code == 409  # the admin sees both namesakes
