"""A Milvus server that stops answering (``tests.support.milvus.Outage`` cuts a relay in front of the session's
server): a recall answers 503 ``index-unavailable`` within seconds, never a hang or a 500; a write the drive
committed meanwhile answers 2xx and says the index is behind, the trashed document is never served, and the
rows catch up once Milvus answers again."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.persistence import open_durable
from tests.support.milvus import Outage
from tests.support.sims import auth, client_for

pytestmark = pytest.mark.milvus_server

TIMEOUT_S = 2.0  # DRIVEBENCH_MILVUS_TIMEOUT for these tests
BOUND_S = 20.0  # generous: the deadline is TIMEOUT_S per call; before, a recall hung 70-75 s
USER = "u009"
QUERY = "project budget platform design handbook finance"


@pytest.fixture
def outage(monkeypatch: pytest.MonkeyPatch) -> Iterator[Outage]:
    monkeypatch.setenv("DRIVEBENCH_MILVUS_TIMEOUT", str(TIMEOUT_S))  # read when the relay's client is made
    relay = Outage()
    yield relay
    relay.cut()


@pytest.fixture
def writer(outage: Outage, tmp_path: Path) -> Iterator[Simulator]:
    config = SimConfig(embedder="hash", pipeline="hybrid", rerank=None, vector_store=f"milvus:{outage.uri}")
    sim = open_durable(tmp_path / "drive", "seed", config, start_saver=False)
    yield sim
    outage.restore()
    sim.close()


def _recall(client, sim: Simulator):  # type: ignore[no-untyped-def]
    return client.post(
        "/api/mcp/recall", headers=auth(sim, "admin"), json={"query": QUERY, "user_id": USER, "top_k": 50}
    )


def _recall_once_back(client, sim: Simulator):  # type: ignore[no-untyped-def]
    """The first recall that is not a 503 after Milvus is back (gRPC reconnects with a back-off of its own)."""
    deadline = time.monotonic() + BOUND_S
    while (r := _recall(client, sim)).status_code == 503 and time.monotonic() < deadline:
        time.sleep(0.2)
    return r


def test_a_recall_with_milvus_stopped_answers_503_index_unavailable_within_seconds(
    writer: Simulator, outage: Outage
) -> None:
    with client_for(writer) as client:
        assert _recall(client, writer).status_code == 200
        outage.cut()
        started = time.monotonic()
        r = _recall(client, writer)
        took = time.monotonic() - started
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "index-unavailable"
        assert "results" not in r.json()
        assert took < BOUND_S, took
        outage.restore()
        assert _recall_once_back(client, writer).status_code == 200


def test_a_recall_with_milvus_hung_answers_503_index_unavailable_after_the_deadline(
    writer: Simulator, outage: Outage
) -> None:
    with client_for(writer) as client:
        assert _recall(client, writer).status_code == 200
        outage.hang()  # connections accepted, never answered: only a deadline ends the call
        started = time.monotonic()
        r = _recall(client, writer)
        took = time.monotonic() - started
        assert r.status_code == 503 and r.json()["error"]["code"] == "index-unavailable", r.text
        assert took < BOUND_S, took
        outage.cut()
        outage.restore()
        assert _recall_once_back(client, writer).status_code == 200


def test_a_trash_with_milvus_stopped_is_committed_answered_2xx_and_never_served(
    writer: Simulator, outage: Outage
) -> None:
    with client_for(writer) as client:
        first = _recall(client, writer)
        assert first.status_code == 200
        doc = first.json()["results"][0]["doc_id"]
        feed_before = len(writer.drive.changes)
        outage.cut()
        r = client.post(f"/api/v1/files/{doc}/trash", headers=auth(writer, "admin"))
        assert r.status_code == 200, r.text  # committed: a success, never a 5xx
        assert r.json()["trashed"] is True and r.headers["drivebench-index"] == "behind"
        assert writer.drive.documents[doc].trashed_at is not None
        assert [c.kind for c in writer.drive.changes[feed_before:]] == ["trashed"]
        stats = client.get("/_sim/stats", headers=auth(writer, "admin")).json()
        assert stats["index_rows_behind"] is True
        r = _recall(client, writer)  # the rows still say "not trashed": nothing is served from them
        assert r.status_code == 503 and r.json()["error"]["code"] == "index-unavailable", r.text
        outage.restore()
        r = _recall_once_back(client, writer)
        assert r.status_code == 200, r.text
        assert doc not in {hit["doc_id"] for hit in r.json()["results"]}
        assert "drivebench-index" not in r.headers
        backend = writer.store.vector_backend
        rows = backend.client.query(
            backend.collection,
            filter=f"doc_no == {backend._doc_rank[doc]}",
            output_fields=["trashed_at"],
            consistency_level="Strong",
        )
        assert rows and all(row["trashed_at"] < 2**63 - 1 for row in rows)  # the rows caught up
