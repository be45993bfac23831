"""``serve --workers N --data-dir D --index milvus:URI``: read replicas of a data directory whose single
writer (``serve --data-dir D --index milvus:URI``) shares one Milvus server's collection with them. Real
processes, the session's Milvus server. A revocation or a new version made through the writer is seen by the
very next recall through the replicas, whichever worker answers, and nobody writes a row twice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from drivebench.api import load_simulator
from drivebench.search.index.milvus_store import client_for
from drivebench.server.process import ReplicaSpec, start_replicas
from drivebench.simulator.backend import SimConfig
from tests.support.milvus import SERVER, index_spec
from tests.support.serverproc import ServerProc

pytestmark = [pytest.mark.milvus_server, pytest.mark.slow]

EVERYTHING = "project 项目 budget 预算 platform design 方案 handbook 手册 finance"
GRANTS = "/api/permissions/grants"
RECALL = "/api/mcp/recall"
ROUNDS = 6  # recalls per check: fresh connections, so both replica processes answer some


@pytest.fixture(scope="module")
def writer_and_replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProc, str]]:
    spec = index_spec(SERVER)
    data_dir = tmp_path_factory.mktemp("shared") / "drive"
    writer = ServerProc(data_dir, pipeline="dense", index=spec)
    writer.start(timeout=120)
    replicas = None
    try:
        replica_spec = ReplicaSpec("seed", "dense", "hash", [], spec, data_dir=str(data_dir))
        replicas, url = start_replicas(replica_spec, 2, timeout=120, access_log=False)
        yield writer, url
    finally:
        if replicas is not None:
            replicas.terminate()
            replicas.wait(30)
        writer.stop()


def _recalled(srv: ServerProc, url: str, user: str, query: str = EVERYTHING) -> list[set[str]]:
    """The documents of ``ROUNDS`` recalls for ``user`` through ``url``, each on a new connection."""
    out = []
    for _ in range(ROUNDS):
        r = httpx.post(url + RECALL, headers=srv.headers("admin"), json={"query": query, "user_id": user, "top_k": 100})
        assert r.status_code == 200, r.text
        out.append({hit["doc_id"] for hit in r.json()["results"]})
    return out


def _target() -> tuple[str, str, str]:
    """(user, document, its path): a document the user may not see now but could with a grant."""
    sim = load_simulator("seed", config=SimConfig(embedder="hash", pipeline="dense"))
    users = sorted(sim.drive.users)

    def visible(u: str) -> set[str]:
        p = sim.engine.user_principal(u)
        return {h.doc_id for h in sim.recall(p, EVERYTHING, 100).hits}

    user = min(users, key=lambda u: len(visible(u)))
    clearance = sim.drive.users[user].clearance
    hidden = sorted(d for d in set(sim.drive.documents) - visible(user))
    doc = next(d for d in hidden if sim.drive.documents[d].secret_level <= clearance)
    return user, doc, sim.drive.doc_path(sim.drive.documents[doc])


def test_a_revocation_through_the_writer_is_seen_by_the_next_recall_on_every_replica(
    writer_and_replicas: tuple[ServerProc, str],
) -> None:
    writer, url = writer_and_replicas
    user, doc, path = _target()
    assert all(doc not in got for got in _recalled(writer, url, user))
    body = {"path": path, "subject": {"kind": "user", "id": user}, "actions": ["preview"]}
    r = writer.post(GRANTS, json=body)
    assert r.status_code == 201, r.text
    grant_id = r.json()["grant"]["grant_id"]
    assert all(doc in got for got in _recalled(writer, url, user))  # the grant reached every replica
    r = httpx.delete(f"{writer.url}{GRANTS}/{grant_id}", headers=writer.headers("admin"), timeout=60)
    assert r.status_code == 200, r.text
    after = _recalled(writer, url, user)  # the very next recalls, no wait
    assert all(doc not in got for got in after), after
    assert _recalled(writer, writer.url, user) == after  # the writer answers the same


def test_a_new_version_is_seen_by_the_replicas_and_no_row_is_written_twice(
    writer_and_replicas: tuple[ServerProc, str],
) -> None:
    writer, url = writer_and_replicas
    user = "u009"
    r = httpx.post(
        url + RECALL, headers=writer.headers("admin"), json={"query": EVERYTHING, "user_id": user, "top_k": 100}
    )
    doc = next(hit["doc_id"] for hit in r.json()["results"] if hit["name"].endswith(".md"))
    marker = "replicamarker zebra quokka"
    r = writer.post(f"/api/v1/files/{doc}/versions", files={"file": ("v.md", f"# {doc}\n\n{marker}\n".encode())})
    assert r.status_code in (200, 201) and r.json()["index"]["state"] == "indexed", r.text
    head = r.json()["version_id"]
    for _ in range(ROUNDS):  # the very next recalls through the replicas find the new version first
        r = httpx.post(
            url + RECALL, headers=writer.headers("admin"), json={"query": marker, "user_id": user, "top_k": 5}
        )
        assert r.status_code == 200, r.text
        top = r.json()["results"][0]
        assert (top["doc_id"], top["version_id"]) == (doc, head), top
    collection = (Path(writer.data_dir) / "milvus" / "COLLECTION").read_text().strip()
    client = client_for(index_spec(SERVER).split(":", 1)[1])
    rows = client.query(collection, filter="id >= 0", output_fields=["id"], limit=16384, consistency_level="Strong")
    ids = [int(row["id"]) for row in rows]
    assert ids and len(ids) == len(set(ids))  # no chunk twice
    for _ in range(ROUNDS):  # new connections: both replica processes answer some; none wrote a row
        vectors = httpx.get(url + "/_sim/stats", headers=writer.headers("admin"), timeout=60).json()["index_backend"]
        assert (vectors["collection"], vectors["rows"]) == (collection, len(ids))
        assert vectors["rows_written"] == vectors["rows_deleted"] == 0
    vectors = httpx.get(writer.url + "/_sim/stats", headers=writer.headers("admin"), timeout=60).json()["index_backend"]
    assert vectors["rows"] == len(ids) and vectors["rows_written"] > 0  # the writer wrote them all


def test_a_trash_through_the_writer_hides_the_document_at_the_next_recall_on_every_replica(
    writer_and_replicas: tuple[ServerProc, str],
) -> None:
    writer, url = writer_and_replicas
    user = "u009"
    doc = sorted(set.intersection(*_recalled(writer, url, user)))[0]
    assert writer.post(f"/api/v1/files/{doc}/trash").status_code == 200  # the rows' trashed_at changes
    assert all(doc not in got for got in _recalled(writer, url, user))
    assert writer.post(f"/api/v1/files/{doc}/untrash").status_code == 200
    assert all(doc in got for got in _recalled(writer, url, user))
