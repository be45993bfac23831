"""The reference connector against a drive whose history is replaced (a reset), in-process: the connector's sync
steps are driven by hand (no interval, no sleep) over a real simulator's HTTP API. After a reset and a few writes
within one interval, every strategy serves exactly the drive's documents and none of the grants the reset took
away; while it cannot be sure of the grants it holds (a re-crawl that fails) it answers 503, never from them.
And its two credentials: the client token is never the drive's, ``/healthz`` counts only for the drive token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from drivebench.connector.app import create_connector_app
from drivebench.connector.index import ConnectorIndex
from drivebench.connector.sync import STRATEGIES, Syncer
from drivebench.evaluator.sync.drive_client import DriveClient, DriveError
from drivebench.simulator.backend import Simulator
from tests.support.clirun import invoke
from tests.support.sims import auth, client_for, upload

CLIENT_TOKEN = "connector-client-token"
GRANTEE = "u012"  # the intern: public clearance, sees little without a grant


class FlakyAccess(DriveClient):
    """A real drive client whose ``/api/v1/access`` read fails while ``down`` (the drive failing mid-crawl)."""

    down = False

    def access_all(self) -> dict[str, set[str]]:
        if self.down:
            raise DriveError("GET /api/v1/access: HTTP 503: the drive is down", 503)
        return super().access_all()


class Connector:
    def __init__(self, sim: Simulator, strategy: str) -> None:
        self.drive = FlakyAccess("http://testserver", sim.tokens.admin_token, http=client_for(sim))
        self.index = ConnectorIndex()
        self.syncer = Syncer(self.drive, strategy, 3600.0, self.index)  # type: ignore[arg-type]
        self.syncer.start()  # the first crawl; the loop would step only after an hour: the test steps it
        app = create_connector_app(self.index, self.syncer, CLIENT_TOKEN, admin_token=sim.tokens.admin_token)
        self.http = TestClient(app, raise_server_exceptions=False)

    def recall(self, user: str, query: str, token: str = CLIENT_TOKEN) -> Any:
        body = {"query": query, "user_id": user, "top_k": 100}
        return self.http.post("/api/mcp/recall", json=body, headers={"Authorization": f"Bearer {token}"})

    def ids(self, user: str, query: str) -> set[str]:
        r = self.recall(user, query)
        assert r.status_code == 200, r.text
        return {x["doc_id"] for x in r.json()["results"]}


@pytest.fixture
def connector(fresh_sim: Simulator, request: pytest.FixtureRequest) -> Iterator[Connector]:
    c = Connector(fresh_sim, request.param)
    yield c
    c.syncer.stop()


def _grant_three(sim: Simulator) -> dict[str, str]:
    """Preview on three documents the grantee cannot see yet: doc_id -> a query that finds it (its name)."""
    drive, client = sim.drive, client_for(sim)
    access = {
        d["doc_id"]: set(d["users"])
        for d in client.get("/api/v1/access", headers=auth(sim, "admin")).json()["documents"]
    }
    clearance = drive.users[GRANTEE].clearance  # a grant never lifts a document above it
    docs = [
        d
        for d in sorted(drive.documents.values(), key=lambda d: d.doc_id)
        if GRANTEE not in access[d.doc_id] and d.secret_level <= clearance
    ]
    granted = {}
    for doc in docs[:3]:
        body = {"path": drive.doc_path(doc), "subject": {"kind": "user", "id": GRANTEE}, "actions": ["preview"]}
        r = client.post("/api/permissions/grants", headers=auth(sim, "admin"), json=body)
        assert r.status_code == 201, r.text
        granted[doc.doc_id] = doc.name.rsplit(".", 1)[0]
    return granted


def _drive_documents(sim: Simulator) -> set[str]:
    return {d.doc_id for d in sim.drive.documents.values() if d.trashed_at is None}


def _reset_and_upload(sim: Simulator, n: int = 5) -> set[str]:
    """A reset, then ``n`` uploads within the same interval: the new feed outgrows the connector's cursor."""
    client = client_for(sim)
    assert client.post("/_sim/reset", headers=auth(sim, "admin")).status_code == 200
    new = set()
    for i in range(n):
        r = upload(client, sim, "u009", "/it", f"zqreset-{i}.md", f"# zqreset {i}\n\nzqreset words\n".encode())
        assert r.status_code == 201, r.text
        new.add(r.json()["doc_id"])
    return new


@pytest.mark.parametrize("connector", STRATEGIES, indirect=True)
def test_after_a_reset_no_revoked_grant_is_served_and_every_new_upload_is_indexed(
    connector: Connector, fresh_sim: Simulator
) -> None:
    granted = _grant_three(fresh_sim)
    for doc in granted:
        connector.drive.touch(doc)  # so even mtime indexes the grants (it misses ACL-only changes)
    connector.syncer.step()
    assert {d for d, name in granted.items() if d in connector.ids(GRANTEE, name)} == set(granted)

    new = _reset_and_upload(fresh_sim)
    connector.syncer.step()  # the first sync after the reset
    for doc, name in granted.items():
        assert doc not in connector.ids(GRANTEE, name), (connector.syncer.strategy, doc)
    snapshot = connector.index.snapshot
    assert snapshot is not None and set(snapshot.docs) == _drive_documents(fresh_sim)
    assert new <= connector.ids("u009", "zqreset")
    assert connector.syncer.stats.errors == 0
    # every later step keeps it so
    connector.syncer.step()
    assert set(connector.index.snapshot.docs) == _drive_documents(fresh_sim)  # type: ignore[union-attr]


@pytest.mark.parametrize("connector", ["changes", "full", "mtime"], indirect=True)
def test_while_a_recrawl_after_a_reset_fails_the_connector_answers_503_never_the_old_grants(
    connector: Connector, fresh_sim: Simulator
) -> None:
    granted = _grant_three(fresh_sim)
    for doc in granted:
        connector.drive.touch(doc)
    connector.syncer.step()
    doc, name = next(iter(granted.items()))
    assert doc in connector.ids(GRANTEE, name)

    _reset_and_upload(fresh_sim)
    connector.drive.down = True
    for _ in range(2):  # the reset is seen, the re-crawl fails; and again at the next interval
        connector.syncer.step()
        r = connector.recall(GRANTEE, name)
        assert r.status_code == 503 and r.json()["error"]["code"] == "resyncing", r.text
        assert r.headers["Retry-After"] == "3600"
        assert connector.recall(GRANTEE, name, token="wrong").status_code == 401  # still authenticated first
    stats = connector.syncer.stats
    assert stats.errors == 2 and stats.resyncs == 1
    health = connector.http.get("/healthz", headers=auth(fresh_sim, "admin")).json()
    assert health["serving"] is False and health["documents"] is None and health["resyncs"] == 1

    connector.drive.down = False
    connector.syncer.step()
    assert doc not in connector.ids(GRANTEE, name)
    assert set(connector.index.snapshot.docs) == _drive_documents(fresh_sim)  # type: ignore[union-attr]


@pytest.mark.parametrize("connector", ["changes"], indirect=True)
def test_healthz_counts_only_for_the_drive_token_and_the_drive_token_is_no_client_token(
    connector: Connector, fresh_sim: Simulator
) -> None:
    for headers in ({}, {"Authorization": f"Bearer {CLIENT_TOKEN}"}, auth(fresh_sim, "u001"), {"Authorization": "x"}):
        r = connector.http.get("/healthz", headers=headers)
        assert r.status_code == 200 and r.json() == {"ok": True}, (headers, r.text)
    counted = connector.http.get("/healthz", headers=auth(fresh_sim, "admin")).json()
    assert counted["documents"] == len(_drive_documents(fresh_sim)) and counted["syncs"] == 1
    assert counted["serving"] is True and counted["errors"] == 0
    # recall and /syncs take the client token, not the drive's
    assert connector.recall("u001", "policy", token=fresh_sim.tokens.admin_token).status_code == 401
    assert connector.http.get("/syncs", headers=auth(fresh_sim, "admin")).status_code == 401
    assert connector.recall("u001", "policy").status_code == 200
    with pytest.raises(ValueError, match="drive token"):
        create_connector_app(connector.index, connector.syncer, "same", admin_token="same")
    allowed = create_connector_app(
        connector.index, connector.syncer, "same", admin_token="same", allow_admin_client_token=True
    )
    assert (
        TestClient(allowed)
        .post("/api/mcp/recall", json={"query": "policy", "user_id": "u001"}, headers={"Authorization": "Bearer same"})
        .status_code
        == 200
    )


def test_the_cli_refuses_the_drive_token_as_the_client_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # refused before the drive is read (nothing listens on port 9): a usage error, exit 2
    argv = ["connector", "--drive", "http://127.0.0.1:9", "--drive-token", "drive-key", "--token", "drive-key"]
    code, _, err = invoke(argv, tmp_path, monkeypatch)
    assert code == 2 and "--allow-drive-token-as-client" in err, err
    code, _, err = invoke([*argv[:-2], "--token", " "], tmp_path, monkeypatch)
    assert code == 2 and "empty token" in err, err
    # allowed explicitly, it goes on to read the drive (which is not there: exit 2 for that instead)
    code, _, err = invoke([*argv, "--allow-drive-token-as-client"], tmp_path, monkeypatch)
    assert code == 2 and "the drive cannot be read" in err and "allow-drive-token" not in err, err
