"""The file API over HTTP: the whole lifecycle, permission checks, hostile and oversized uploads."""

from __future__ import annotations

import io
import zipfile

from fastapi.testclient import TestClient

from drivebench.simulator.backend import Simulator
from tests.support.sims import auth, hit_ids, recall, upload

F = "/api/v1/files"


def test_whole_lifecycle(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    # u009 (it department: manage on /it) uploads, versions, restores, renames, moves, trashes
    r = upload(fresh_client, fresh_sim, "u009", "/it", "运维手册.md", "# 运维手册\n备份策略 alpha-marker-1".encode())
    assert r.status_code == 201, r.text
    up = r.json()
    doc, v1 = up["doc_id"], up["version_id"]
    assert up["version"] == 1 and up["path"] == "/it/运维手册.md" and up["index"]["state"] == "indexed"
    assert hit_ids(recall(fresh_client, fresh_sim, "u009", "alpha-marker-1"))[0] == doc  # acknowledged = recallable

    r = fresh_client.post(
        f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009"), files={"file": ("x.md", b"# v2\nbeta-marker-2")}
    )
    assert r.status_code == 201 and r.json()["version"] == 2
    v2 = r.json()["version_id"]
    res = recall(fresh_client, fresh_sim, "u009", "beta-marker-2")
    assert res["results"][0]["doc_id"] == doc and res["results"][0]["version_id"] == v2
    # superseded: the old text no longer matches the document now (any hit for it is the new head)
    assert all(
        h["version_id"] == v2
        for h in recall(fresh_client, fresh_sim, "u009", "alpha-marker-1")["results"]
        if h["doc_id"] == doc
    )

    meta = fresh_client.get(f"{F}/{doc}", headers=auth(fresh_sim, "u009")).json()
    assert meta["versions"] == 2 and meta["head"]["version_id"] == v2 and meta["owner"] == "u009"
    versions = fresh_client.get(f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009")).json()["versions"]
    assert [v["version_id"] for v in versions] == [v1, v2] and [v["is_head"] for v in versions] == [False, True]

    body = fresh_client.get(f"{F}/{doc}/content", headers=auth(fresh_sim, "u009"))
    assert body.status_code == 200 and body.content == b"# v2\nbeta-marker-2"
    assert body.headers["x-version-id"] == v2 and body.headers["etag"].strip('"') == versions[1]["sha256"]
    old = fresh_client.get(f"{F}/{doc}/content", params={"version_id": v1}, headers=auth(fresh_sim, "u009"))
    assert old.content.decode() == "# 运维手册\n备份策略 alpha-marker-1"
    assert (
        fresh_client.get(
            f"{F}/{doc}/content", params={"version_id": "nope"}, headers=auth(fresh_sim, "u009")
        ).status_code
        == 404
    )

    r = fresh_client.post(f"{F}/{doc}/versions/{v1}/restore", headers=auth(fresh_sim, "u009"))
    assert r.status_code == 201 and r.json()["version"] == 3
    assert fresh_client.get(f"{F}/{doc}/content", headers=auth(fresh_sim, "u009")).content == old.content
    v3 = fresh_client.get(f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009")).json()["versions"][-1]
    assert v3["restored_from"] == v1 and v3["sha256"] == versions[0]["sha256"]
    assert hit_ids(recall(fresh_client, fresh_sim, "u009", "alpha-marker-1"))[0] == doc

    r = fresh_client.patch(f"{F}/{doc}", headers=auth(fresh_sim, "u009"), json={"name": "备份手册.md"})
    assert r.status_code == 200 and r.json()["path"] == "/it/备份手册.md"
    assert recall(fresh_client, fresh_sim, "u009", "alpha-marker-1")["results"][0]["name"] == "备份手册.md"

    r = fresh_client.post(f"{F}/{doc}/trash", headers=auth(fresh_sim, "u009"))
    assert r.status_code == 200 and r.json()["trashed"]
    assert doc not in hit_ids(recall(fresh_client, fresh_sim, "u009", "alpha-marker-1"))
    listing = fresh_client.get(F, params={"folder": "/it", "trashed": "true"}, headers=auth(fresh_sim, "u009")).json()
    assert [f["doc_id"] for f in listing["files"]] == [doc]
    assert (
        fresh_client.post(
            f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009"), files={"file": ("x.md", b"x")}
        ).status_code
        == 409
    )
    r = fresh_client.post(f"{F}/{doc}/untrash", headers=auth(fresh_sim, "u009"))
    assert r.status_code == 200 and not r.json()["trashed"]
    assert hit_ids(recall(fresh_client, fresh_sim, "u009", "alpha-marker-1"))[0] == doc

    kinds = [c["kind"] for c in fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "u009")).json()["changes"]]
    assert kinds == ["created", "updated", "restored", "renamed", "trashed", "untrashed"]

    assert fresh_client.delete(f"{F}/{doc}", headers=auth(fresh_sim, "u009")).status_code == 403  # purge: admin only
    r = fresh_client.delete(f"{F}/{doc}", headers=auth(fresh_sim, "admin"))
    assert r.status_code == 200 and r.json() == {"doc_id": doc, "purged": True}
    assert fresh_client.get(f"{F}/{doc}", headers=auth(fresh_sim, "admin")).status_code == 404
    assert doc not in hit_ids(recall(fresh_client, fresh_sim, "u009", "alpha-marker-1"))
    assert not any(fresh_sim.store.alive[i] for i, d in enumerate(fresh_sim.store.doc_ids) if d == doc)
    feed = fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "admin")).json()
    assert feed["changes"][-1]["kind"] == "purged" and feed["next_cursor"] == feed["latest_cursor"] == 7


def test_move_needs_upload_on_destination_and_changes_access(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    # u003 manages /projects/project-x; u010 (rd-platform) edits /rd/platform
    r = upload(fresh_client, fresh_sim, "u003", "/projects/project-x", "plan.md", b"# plan\ngamma-marker-3")
    doc = r.json()["doc_id"]
    # finance u005 is a project member
    assert hit_ids(recall(fresh_client, fresh_sim, "u005", "gamma-marker-3"))[0] == doc
    r = fresh_client.patch(f"{F}/{doc}", headers=auth(fresh_sim, "u003"), json={"folder": "/rd/platform"})
    assert r.status_code == 403  # u003 has no upload on /rd/platform (only download through /rd)
    r = fresh_client.patch(f"{F}/{doc}", headers=auth(fresh_sim, "admin"), json={"folder": "/rd/platform"})
    assert r.status_code == 200 and r.json()["folder"] == "/rd/platform"
    assert doc not in hit_ids(recall(fresh_client, fresh_sim, "u005", "gamma-marker-3"))  # re-evaluated on move
    assert hit_ids(recall(fresh_client, fresh_sim, "u010", "gamma-marker-3"))[0] == doc
    assert (
        fresh_client.patch(f"{F}/{doc}", headers=auth(fresh_sim, "admin"), json={}).status_code == 422
    )  # minProperties
    assert (
        fresh_client.patch(f"{F}/{doc}", headers=auth(fresh_sim, "admin"), json={"folder": "/nope"}).status_code == 404
    )


def test_permissions_hide_and_forbid(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    doc = upload(fresh_client, fresh_sim, "u010", "/rd/platform", "arch.md", b"# arch\ndelta-marker-4").json()["doc_id"]
    # u005 (finance) may not even list it: 404 exactly like a missing document
    for path in (f"{F}/{doc}", f"{F}/{doc}/versions", f"{F}/{doc}/content"):
        r = fresh_client.get(path, headers=auth(fresh_sim, "u005"))
        assert r.status_code == 404 and r.json()["error"]["message"] == f"no document {doc!r}"
    assert (
        fresh_client.get(f"{F}/n99999", headers=auth(fresh_sim, "u005")).json()["error"]["message"]
        == "no document 'n99999'"
    )
    # u001 (rd: download on /rd) reads it but may not edit, trash or upload there
    assert fresh_client.get(f"{F}/{doc}/content", headers=auth(fresh_sim, "u001")).status_code == 200
    assert (
        fresh_client.post(
            f"{F}/{doc}/versions", headers=auth(fresh_sim, "u001"), files={"file": ("a.md", b"x")}
        ).status_code
        == 403
    )
    assert fresh_client.post(f"{F}/{doc}/trash", headers=auth(fresh_sim, "u001")).status_code == 403
    assert upload(fresh_client, fresh_sim, "u001", "/rd/platform", "b.md", b"# b").status_code == 403
    # the intern u012 (public clearance, hr) cannot see /rd at all: 404 on the folder
    assert upload(fresh_client, fresh_sim, "u012", "/rd/platform", "c.md", b"# c").status_code == 404
    # u010 edits but may not delete; u009 may not upload above its clearance
    assert fresh_client.post(f"{F}/{doc}/trash", headers=auth(fresh_sim, "u010")).status_code == 403
    r = upload(fresh_client, fresh_sim, "u009", "/it", "s.md", b"# s", secret_level="secret")
    assert r.status_code == 403 and "clearance" in r.json()["error"]["message"]
    # tokens: none -> 401, the evaluation token -> 403, changes feed filtered
    assert fresh_client.get(f"{F}/{doc}").status_code == 401
    eval_headers = {"Authorization": f"Bearer {fresh_sim.tokens.eval_token}"}
    assert fresh_client.get(f"{F}/{doc}", headers=eval_headers).status_code == 403
    assert fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "u005")).json()["changes"] == []
    assert [
        c["doc_id"] for c in fresh_client.get("/api/v1/changes", headers=auth(fresh_sim, "u001")).json()["changes"]
    ] == [doc]
    assert (
        fresh_client.get("/api/v1/changes", params={"cursor": 99}, headers=auth(fresh_sim, "u001")).status_code == 409
    )


def test_hostile_uploads_are_kept_unindexed_or_refused(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("../escape.txt", "epsilon-marker-5")
    evil = buf.getvalue()
    r = upload(fresh_client, fresh_sim, "u009", "/it", "evil.zip", evil)
    assert r.status_code == 201
    assert r.json()["index"] == {
        "state": "rejected",
        "chunks": None,
        "reason": "path-traversal",
        "message": r.json()["index"]["message"],
    }
    doc = r.json()["doc_id"]
    assert fresh_client.get(f"{F}/{doc}/content", headers=auth(fresh_sim, "u009")).content == evil  # kept byte for byte
    assert doc not in hit_ids(recall(fresh_client, fresh_sim, "u009", "evil.zip epsilon-marker-5"))
    r = upload(fresh_client, fresh_sim, "u009", "/it", "evil2.zip", evil, strict=True)
    assert r.status_code == 422 and r.json()["error"]["code"] == "path-traversal"
    assert "evil2.zip" not in [
        f["name"]
        for f in fresh_client.get(F, params={"folder": "/it"}, headers=auth(fresh_sim, "u009")).json()["files"]
    ]
    for name, data, reason in [
        ("fake.pdf", b"just text, not a pdf", "type-mismatch"),
        ("tool.exe", b"MZ\x90\x00", "unsupported-type"),
        ("empty.md", b"", "empty-file"),
        ("broken.docx", b"PK\x03\x04garbage", "corrupt-docx"),
    ]:
        r = upload(fresh_client, fresh_sim, "u009", "/it", name, data)
        assert r.status_code == 201 and r.json()["index"]["state"] == "rejected", (name, r.text)
        assert r.json()["index"]["reason"] == reason, (name, r.json())
    assert fresh_client.get("/healthz").status_code == 200


def test_upload_limits_and_bad_requests(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    fresh_client.app.state.max_upload_bytes = 1000  # type: ignore[attr-defined]
    r = upload(fresh_client, fresh_sim, "u009", "/it", "big.md", b"x" * 1001)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too-large"
    r = fresh_client.post(  # announced length over the limit: refused before the body is parsed
        F,
        headers={
            **auth(fresh_sim, "u009"),
            "content-type": "multipart/form-data; boundary=x",
            "content-length": "999999",
        },
    )
    assert r.status_code == 413
    assert upload(fresh_client, fresh_sim, "u009", "/it", "ok.md", b"x" * 1000).status_code == 201
    r = fresh_client.post(F, headers=auth(fresh_sim, "u009"), json={"folder": "/it"})
    assert r.status_code == 415
    r = fresh_client.post(F, headers=auth(fresh_sim, "u009"), data={"folder": "/it"}, files={"other": ("a.md", b"x")})
    assert r.status_code == 400 and "`file`" in r.json()["error"]["message"]
    r = fresh_client.post(F, headers=auth(fresh_sim, "u009"), files={"file": ("a.md", b"# a")})
    assert r.status_code == 400 and "folder" in r.json()["error"]["message"]
    assert upload(fresh_client, fresh_sim, "u009", "it", "a.md", b"# a").status_code == 400  # path must start with /
    # the client path is stripped
    assert upload(fresh_client, fresh_sim, "u009", "/it", "../a.md", b"# a").status_code == 201
    r = fresh_client.post(
        F, headers=auth(fresh_sim, "u009"), files={"file": ("a.md", b"# a")}, data={"folder": "/it", "name": "x/y"}
    )
    assert r.status_code == 400
    # name taken: upload a version
    assert upload(fresh_client, fresh_sim, "u009", "/it", "a.md", b"# a").status_code == 409
    assert upload(fresh_client, fresh_sim, "u009", "/it", "b.md", b"# b", secret_level="top").status_code == 400
    # a field given twice, an empty name given, a field the route does not read: refused, nothing stored
    before = len(fresh_sim.drive.documents)
    for data in ({"folder": ["/it", "/rd"]}, {"folder": "/it", "name": ""}, {"folder": "/it", "colour": "red"}):
        r = fresh_client.post(F, headers=auth(fresh_sim, "u009"), files={"file": ("c.md", b"# c")}, data=data)
        assert r.status_code == 400, (data, r.text)
    r = fresh_client.post(F, headers=auth(fresh_sim, "u009"), files={"file": ("c.md", b"# c")}, data={"folder": ""})
    assert r.status_code == 400, r.text
    assert len(fresh_sim.drive.documents) == before


def test_retention_settings_over_http(fresh_client: TestClient, fresh_sim: Simulator) -> None:
    doc = upload(fresh_client, fresh_sim, "u009", "/it", "r.md", b"# r1\nzeta-marker-6").json()["doc_id"]
    for i in range(2, 5):
        fresh_client.post(
            f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009"), files={"file": ("r.md", f"# r{i}".encode())}
        )
    assert (
        fresh_client.put(
            "/api/v1/settings/retention", headers=auth(fresh_sim, "u009"), json={"versions_kept": 2}
        ).status_code
        == 403
    )
    r = fresh_client.put("/api/v1/settings/retention", headers=auth(fresh_sim, "admin"), json={"versions_kept": 2})
    assert r.status_code == 200, r.text
    assert r.json()["deleted_versions"] == 2  # this document's v1 and v2 (corpus documents have <= 2 versions)
    versions = fresh_client.get(f"{F}/{doc}/versions", headers=auth(fresh_sim, "u009")).json()["versions"]
    assert [v["version"] for v in versions] == [3, 4]
    v1_chunks = fresh_sim.store.by_version.get(f"{doc}-v1")
    assert v1_chunks is None  # deleted versions leave the index (and as_of answers)
    assert (
        fresh_client.put(
            "/api/v1/settings/retention", headers=auth(fresh_sim, "admin"), json={"versions_kept": 0}
        ).status_code
        == 422
    )
    r = fresh_client.put("/api/v1/settings/retention", headers=auth(fresh_sim, "admin"), json={"trash_days": 3})
    assert r.json()["retention"] == {"versions_kept": None, "days": None, "trash_days": 3.0}
    fresh_client.post(f"{F}/{doc}/trash", headers=auth(fresh_sim, "u009"))
    r = fresh_client.post("/_sim/clock/advance", headers=auth(fresh_sim, "admin"), json={"days": 3})
    assert r.status_code == 200 and r.json()["purged_documents"] == 1
    assert fresh_client.get(f"{F}/{doc}", headers=auth(fresh_sim, "admin")).status_code == 404
    assert (
        fresh_client.get("/api/v1/settings/retention", headers=auth(fresh_sim, "admin")).json()["retention"][
            "trash_days"
        ]
        == 3.0
    )


def test_openapi_documents_the_drive_api(fresh_client: TestClient) -> None:
    paths = fresh_client.get("/openapi.json").json()["paths"]
    for path in (
        "/api/v1/files",
        "/api/v1/files/{doc_id}",
        "/api/v1/files/{doc_id}/versions",
        "/api/v1/files/{doc_id}/content",
        "/api/v1/files/{doc_id}/versions/{version_id}/restore",
        "/api/v1/files/{doc_id}/trash",
        "/api/v1/files/{doc_id}/untrash",
        "/api/v1/changes",
        "/api/v1/settings/retention",
        "/_sim/reset",
        "/_sim/seed",
        "/_sim/clock",
        "/_sim/clock/advance",
        "/_sim/stats",
    ):
        assert path in paths, path
    upload_body = paths["/api/v1/files"]["post"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert set(upload_body["required"]) == {"file", "folder"}
    assert set(paths["/api/v1/files/{doc_id}"]) == {"get", "patch", "delete"}
