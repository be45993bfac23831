"""A read replica of a data directory (``persistence.follower``) answers exactly like the directory's writer:
same pipeline, embedder and reranker, so the same top-k for every seed question. In process, on the session's
Milvus server (a replica follows only a Milvus server's collection)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.persistence import open_durable
from drivebench.simulator.persistence.follower import open_follower
from tests.support.milvus import SERVER, index_spec
from tests.support.sims import auth, client_for

pytestmark = pytest.mark.milvus_server

TOP_K = 5


@pytest.fixture(scope="module")
def writer_and_replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Simulator, Simulator]]:
    config = SimConfig(embedder="hash", pipeline="hybrid", rerank="ltr", vector_store=index_spec(SERVER))
    data_dir = tmp_path_factory.mktemp("replica") / "drive"
    writer = open_durable(data_dir, "seed", config, start_saver=False)
    try:
        replica, _follower = open_follower(Path(data_dir), config)
        yield writer, replica
    finally:
        writer.close()


def _top(client: TestClient, sim: Simulator, question: dict[str, object]) -> list[str]:
    r = client.post("/api/mcp/recall", headers=auth(sim, "admin"), json={**question, "top_k": TOP_K})
    assert r.status_code == 200, r.text
    return [hit["doc_id"] for hit in r.json()["results"]]


def test_a_replica_returns_the_writers_top_k_for_every_seed_question_with_the_reranker(
    writer_and_replica: tuple[Simulator, Simulator],
) -> None:
    writer, replica = writer_and_replica
    assert writer.corpus_dir is not None
    questions = load_evalset(writer.corpus_dir / EVALSET_NAME)
    assert len(questions) >= 20
    with client_for(writer) as w, client_for(replica) as r:
        for q in questions:
            ask = q.model_dump(include={"query", "user_id", "user_role", "department"}, exclude_none=True)
            assert _top(r, replica, ask) == _top(w, writer, ask), q.query_id


def test_admin_healthz_on_a_replica_reports_the_writers_reranker(
    writer_and_replica: tuple[Simulator, Simulator],
) -> None:
    writer, replica = writer_and_replica
    with client_for(writer) as w, client_for(replica) as r:
        mine = r.get("/healthz", headers=auth(replica, "admin")).json()
        theirs = w.get("/healthz", headers=auth(writer, "admin")).json()
    assert mine["rerank"] == theirs["rerank"] == "ltr"
    assert mine["index"]["rerank"] == theirs["index"]["rerank"] is not None
