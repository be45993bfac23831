"""The reference connector as a real process fed from a real simulator: it answers only from ACLs it synced,
its three strategies behave as documented, each re-crawls after a drive reset, and it refuses bad requests and
the drive's token."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.connectorproc import ConnectorProc
from tests.support.serverproc import ServerProc


@pytest.fixture(scope="module")
def drive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    proc = ServerProc(tmp_path_factory.mktemp("conn") / "data")
    proc.start()
    yield proc
    proc.stop()


def _connector(drive: ServerProc, tmp_path: Path, strategy: str, interval: float = 0.5) -> ConnectorProc:
    c = ConnectorProc(drive.url, drive.token("admin"), strategy, interval, tmp_path / f"{strategy}.log")
    c.start()
    return c


def _ids(r: httpx.Response) -> list[str]:
    assert r.status_code == 200, r.text
    return [x["doc_id"] for x in r.json()["results"]]


def _files(drive: ServerProc) -> list[dict]:
    """What the drive lists (trashed documents are not listed, nor indexed)."""
    return drive.get("/api/v1/files", params={"folder": "/", "recursive": "true"}).json()["files"]


def _wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_answers_only_what_the_drive_lets_each_user_preview(drive: ServerProc, tmp_path: Path) -> None:
    c = _connector(drive, tmp_path, "changes")  # no --token: it generates its client token and prints it
    try:
        assert c.token and c.token != drive.token("admin")
        assert c.recall("u001", "policy", token=drive.token("admin")).status_code == 401  # not the drive's key
        access = drive.get("/api/v1/access").json()["documents"]
        allowed = {d["doc_id"]: set(d["users"]) for d in access}
        for user in ("u001", "u004", "u010"):
            for query in ("预算 审批", "policy", "项目X", "design architecture"):
                for doc in _ids(c.recall(user, query)):
                    assert user in allowed[doc], (user, query, doc)
        files = drive.get("/api/v1/files", params={"folder": "/", "recursive": "true"}).json()["files"]
        md = next(f for f in files if f["name"].endswith(".md") and "u001" in allowed[f["doc_id"]])
        assert md["doc_id"] in _ids(c.recall("u001", md["name"].rsplit(".", 1)[0]))
        # refusals, and the server stays up
        assert c.recall("u001", "policy", token="wrong").status_code == 401
        bad = httpx.post(
            f"{c.url}/api/mcp/recall",
            json={"query": "x", "user_role": "engineer"},
            headers={"Authorization": f"Bearer {c.token}"},
        )
        assert bad.status_code == 400
        assert c.recall("u001", "policy", top_k=0).status_code == 422
        assert httpx.get(f"{c.url}/healthz").json() == {"ok": True}  # no counts without the drive token
        assert c.health()["documents"] == len(_files(drive))
        assert c.recall("zz-nobody", "policy").json()["results"] == []  # no ACL names them: nothing
    finally:
        c.stop()


def _grant_only_way(drive: ServerProc) -> tuple[str, str, str]:
    """A user, a document only a grant we add reaches, and that grant's id (added here)."""
    access = {d["doc_id"]: set(d["users"]) for d in drive.get("/api/v1/access").json()["documents"]}
    files = drive.get("/api/v1/files", params={"folder": "/", "recursive": "true"}).json()["files"]
    f = next(f for f in files if "u004" not in access[f["doc_id"]] and f["secret_level"] in ("public", "internal"))
    body = {"path": f["path"], "subject": {"kind": "user", "id": "u004"}, "actions": ["preview"]}
    g = drive.post("/api/permissions/grants", json=body)
    assert g.status_code == 201, g.text
    return "u004", f["doc_id"], g.json()["grant"]["grant_id"]


@pytest.mark.parametrize("strategy", ["changes", "mtime", "full"])
def test_strategies_see_a_grant_removal_or_miss_it_as_documented(
    drive: ServerProc, tmp_path: Path, strategy: str
) -> None:
    drive.post("/_sim/reset")
    user, doc, grant = _grant_only_way(drive)
    files = {
        f["doc_id"]: f for f in drive.get("/api/v1/files", params={"folder": "/", "recursive": "true"}).json()["files"]
    }
    name = files[doc]["name"].rsplit(".", 1)[0]
    assert drive.post(f"/api/v1/files/{doc}/trash").status_code == 200  # touch: even mtime indexes the grant
    assert drive.post(f"/api/v1/files/{doc}/untrash").status_code == 200
    c = _connector(drive, tmp_path, strategy)
    try:
        assert doc in _ids(c.recall(user, name))
        r = httpx.delete(f"{drive.url}/api/permissions/grants/{grant}", headers=drive.headers("admin"))
        assert r.status_code == 200, r.text
        if strategy == "mtime":  # two whole syncs after the removal (the first may have begun before it)
            c.wait_syncs(2)
            assert doc in _ids(c.recall(user, name)), "an ACL-only change must be missed by a sync by modification time"
        else:
            assert _wait(lambda: doc not in _ids(c.recall(user, name)), 4)
        # a new version with a unique word is found by every strategy
        md = next(f for f in files.values() if f["name"].endswith(".md") and f["doc_id"] != doc)
        files_form = {"file": (md["name"], f"# {md['name']}\n\nzqconnector{strategy} new text\n".encode())}
        up = httpx.post(
            f"{drive.url}/api/v1/files/{md['doc_id']}/versions", files=files_form, headers=drive.headers("admin")
        )
        assert up.status_code == 201, up.text
        readers = {d["doc_id"]: d["users"] for d in drive.get("/api/v1/access").json()["documents"]}[md["doc_id"]]
        assert _wait(lambda: md["doc_id"] in _ids(c.recall(readers[0], f"zqconnector{strategy}")), 4)
        # a drive reset: every strategy re-crawls (recall may answer 503 meanwhile, never the old state)
        assert drive.post("/_sim/reset").status_code == 200

        def forgotten() -> bool:
            r = c.recall(readers[0], f"zqconnector{strategy}")
            assert r.status_code in (200, 503), r.text
            return r.status_code == 200 and md["doc_id"] not in _ids(r)

        assert _wait(forgotten, 4)
        health = c.health()
        assert health["resyncs"] == 1 and health["serving"] is True and health["errors"] == 0
        assert health["documents"] == len(_files(drive))
    finally:
        c.stop()
