"""The reference connector as a real process fed from a real simulator: it answers only from ACLs it synced,
its three strategies behave as documented, it survives a drive reset, and refuses bad requests."""

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


def _wait(predicate, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_answers_only_what_the_drive_lets_each_user_preview(drive: ServerProc, tmp_path: Path) -> None:
    c = _connector(drive, tmp_path, "changes")
    try:
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
            headers={"Authorization": f"Bearer {drive.token('admin')}"},
        )
        assert bad.status_code == 400
        assert c.recall("u001", "policy", top_k=0).status_code == 422
        assert httpx.get(f"{c.url}/healthz").json()["ok"] is True
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
        gone = _wait(lambda: doc not in _ids(c.recall(user, name)), 4)
        if strategy == "mtime":
            assert not gone, "an ACL-only change must be missed by a sync by modification time"
        else:
            assert gone
        # a new version with a unique word is found by every strategy
        md = next(f for f in files.values() if f["name"].endswith(".md") and f["doc_id"] != doc)
        files_form = {"file": (md["name"], f"# {md['name']}\n\nzqconnector{strategy} new text\n".encode())}
        up = httpx.post(
            f"{drive.url}/api/v1/files/{md['doc_id']}/versions", files=files_form, headers=drive.headers("admin")
        )
        assert up.status_code == 201, up.text
        readers = {d["doc_id"]: d["users"] for d in drive.get("/api/v1/access").json()["documents"]}[md["doc_id"]]
        assert _wait(lambda: md["doc_id"] in _ids(c.recall(readers[0], f"zqconnector{strategy}")), 4)
        # a drive reset: the connector re-crawls and keeps answering
        assert drive.post("/_sim/reset").status_code == 200
        assert (
            _wait(lambda: md["doc_id"] not in _ids(c.recall(readers[0], f"zqconnector{strategy}")), 4)
            or strategy == "mtime"
        )
        assert httpx.get(f"{c.url}/healthz").json()["ok"] is True
    finally:
        c.stop()
