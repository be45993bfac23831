"""The retrieval levers as pipelines (``hierarchical``, ``deep``, ``prf``): inside the caller's mask, never
under-filled, deterministic, follow-up queries and expansion terms only from text the caller may see, and
the names accepted (or refused clearly) by SimConfig and the CLI. Hash embedder: no model needed."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from drivebench.cli.main import app
from drivebench.search.index.chunk_store import ChunkStore
from drivebench.search.index.embedders import get_embedder
from drivebench.search.index.tokenize import tokenize
from drivebench.search.retrieval import deep as deep_mod
from drivebench.search.retrieval.deep import Deep, codes_in
from drivebench.search.retrieval.pipelines import LEVERS, PIPELINES, Retriever
from drivebench.search.retrieval.prf import PseudoRelevanceFeedback, rm3_terms
from drivebench.search.retrieval.rerank import DEFAULT_DEPTH, FEATURES, RerankingRetriever, with_rerank
from drivebench.simulator.backend import SimConfig, Simulator
from tests.support.sims import fresh_sim

QUERIES = ("budget report", "员工手册 年假", "INC-2026-0917 preview outage", "采购合同 金额", "remote work policy")


def allowed_docs(store: ChunkStore, mask: np.ndarray) -> set[str]:
    n = len(store.doc_ids)
    return {store.doc_ids[i] for i in np.flatnonzero(mask[:n] & store.alive[:n])}


def check(store: ChunkStore, retriever: Retriever, query: str, mask: np.ndarray, top_k: int) -> list[str]:
    hits = retriever.search(query, mask, top_k)
    docs = [h.doc_id for h in hits]
    allowed = allowed_docs(store, mask)
    assert set(docs) <= allowed, (retriever.pipeline, query, set(docs) - allowed)
    assert all(mask[h.chunk_id] for h in hits), "a shown chunk outside the mask"
    assert all(store.doc_ids[h.chunk_id] == h.doc_id for h in hits), "a shown chunk of another document"
    assert len(docs) == len(set(docs)), "a document twice"
    # never under-filled: as many documents as asked for when that many are allowed
    assert len(docs) == min(top_k, len(allowed)), (retriever.pipeline, query, len(docs), len(allowed))
    return docs


@pytest.mark.parametrize("pipeline", LEVERS)
def test_levers_stay_inside_each_users_mask_and_fill_top_k(module_sim: Simulator, pipeline: str) -> None:
    sim = module_sim
    sim.sync_index()
    retriever = Retriever(sim.store, sim.embedder, pipeline)
    now = sim.drive.clock.now()
    users = sorted(sim.drive.users)
    assert len(users) >= 5
    seen_sizes = set()
    for user in users:
        principal = sim.principal_for(sim.tokens.resolve(sim.tokens.eval_token), user_id=user)
        mask = sim.visible_chunks(principal, now)
        seen_sizes.add(len(allowed_docs(sim.store, mask)))
        for query in QUERIES:
            for top_k in (1, 5, 10):
                check(sim.store, retriever, query, mask, top_k)
    assert len(seen_sizes) > 1, "the users should see different sets, or the property proves little"


@pytest.mark.parametrize("pipeline", LEVERS)
def test_levers_stay_inside_random_masks(module_sim: Simulator, pipeline: str) -> None:
    """Property-style: random document subsets (a few documents up to most of them), each query, several k."""
    sim = module_sim
    sim.sync_index()
    store = sim.store
    retriever = Retriever(store, sim.embedder, pipeline)
    docs = sorted(set(store.doc_ids))
    rng = np.random.default_rng(31)
    for _ in range(12):
        keep = set(rng.choice(docs, size=int(rng.integers(1, len(docs))), replace=False))
        mask = np.array([d in keep for d in store.doc_ids], dtype=bool)
        for query in QUERIES:
            check(store, retriever, query, mask, int(rng.integers(1, 15)))


@pytest.mark.parametrize("pipeline", LEVERS)
def test_levers_are_deterministic(module_sim: Simulator, pipeline: str) -> None:
    sim = module_sim
    sim.sync_index()
    mask = np.ones(len(sim.store), dtype=bool)
    first = [Retriever(sim.store, sim.embedder, pipeline).search(q, mask, 10) for q in QUERIES]
    again = [Retriever(sim.store, sim.embedder, pipeline).search(q, mask, 10) for q in QUERIES]
    assert first == again
    assert any(first), "the queries should find something"


# A small drive with a chain: the project document names its assembly drawing GW-3105, the drawing names
# the project nowhere. HIDDEN is a document the caller may not see, with a code of its own (ZZ-9999) that a
# visible document also carries: a follow-up query built from hidden text would pull that visible one in.
CHAIN = {
    "p": ["项目立项书 PX-2026-003 · 立项书.docx\n项目 PX-2026-003 的整机采用装配图 GW-3105，由设计部负责。"],
    "g": ["装配图 GW-3105 · DWG-A001.dxf\n装配图 GW-3105 外形尺寸 380 x 230 x 100 mm，明细栏三项。"],
    "z": ["备件清单 · 备件.xlsx\n备件 ZZ-9999 的库存与采购记录。"],
    **{f"n{i}": [f"周报 {i} · 周报{i}.docx\n本周 PX-2026-003 项目进展顺利，会议纪要第 {i} 期。"] for i in range(6)},
    "v": [
        "评审纪要 PX-2026-003 · 评审.docx\n项目 PX-2026-003 评审通过，整机尺寸待定。",
        "评审纪要 PX-2026-003 · 评审.docx\n附：备件 ZZ-9999 由外协提供。",  # masked below: hidden text of a visible doc
    ],
}
HIDDEN = {"h": ["绝密 PX-2026-003 · 绝密.docx\n项目 PX-2026-003 整机尺寸见 ZZ-9999 备件清单，预算 ZZ-9999。"]}


def build(docs: dict[str, list[str]]) -> ChunkStore:
    embedder = get_embedder("hash")
    store = ChunkStore(embedder.dim)
    for doc, texts in docs.items():
        store.add(doc, f"{doc}-v1", [(t, "body") for t in texts], embedder.encode_passages(texts))
    return store


def chain_mask(store: ChunkStore) -> np.ndarray:
    mask = np.array([d != "h" for d in store.doc_ids], dtype=bool)
    mask[store.by_version["v-v1"][1]] = False  # the second chunk of a visible document is not for this caller
    return mask


def test_deep_follows_the_bridge_code_and_counts_its_rounds() -> None:
    store = build(CHAIN)
    retriever = Retriever(store, get_embedder("hash"), "deep")
    query = "PX-2026-003 的整机有多大？"
    lever = retriever.lever()
    assert isinstance(lever, Deep)
    plan = lever.plan(query, chain_mask(store), 3)
    assert plan[0][0] == [query, "PX-2026-003"]  # the question, then its own code searched alone
    assert plan[1][0] == ["GW-3105"], plan  # the bridge: found in the project document, not in the question
    docs = [h.doc_id for h in retriever.search(query, chain_mask(store), 3)]
    assert "g" in docs, docs  # the second link, which shares no word with the question
    hybrid = [h.doc_id for h in Retriever(store, get_embedder("hash"), "hybrid").search(query, chain_mask(store), 3)]
    assert "g" not in hybrid, "the chain should need the follow-up query, or this test proves nothing"
    cost = lever.cost_summary()
    assert [c["round"] for c in cost] == [1, 2, 3]
    assert cost[0]["calls"] == 2 and cost[1]["calls"] == 2 and cost[1]["queries_per_call"] == 1.0
    assert all(c["ms_per_call"] >= 0 for c in cost)


@pytest.mark.parametrize("pipeline", LEVERS)
def test_expansion_never_uses_hidden_text(pipeline: str) -> None:
    """The same drive with and without the hidden document (added last: the other chunk ids are equal) gives
    the same ranking and scores, and no follow-up query or expansion term carries the hidden code."""
    with_hidden = build({**CHAIN, **HIDDEN})
    without = build(CHAIN)
    mask = chain_mask(with_hidden)
    embedder = get_embedder("hash")
    for query in ("PX-2026-003 的整机有多大？", "项目 整机尺寸 预算", "PX-2026-003 备件"):
        for top_k in (2, 5):
            a = Retriever(with_hidden, embedder, pipeline).search(query, mask, top_k)
            b = Retriever(without, embedder, pipeline).search(query, mask[: len(without)], top_k)
            assert a == b, (query, a, b)
            assert "h" not in {h.doc_id for h in a}
        lever = Retriever(with_hidden, embedder, pipeline).lever()
        n = len(with_hidden)
        visible_text = [with_hidden.texts[i] for i in range(n) if mask[i]]
        visible_tokens = {t for text in visible_text for t in tokenize(text)}
        if isinstance(lever, Deep):
            asked = [q for queries, _ in lever.plan(query, mask, 5)[1:] for q in queries]
            assert asked, "the drive has bridge codes: the follow-ups should not be empty"
            assert all(any(q in text for text in visible_text) for q in asked), asked
        if isinstance(lever, PseudoRelevanceFeedback):
            _, terms = lever.expansion(query, mask[:n] & with_hidden.alive[:n])
            assert terms and set(terms) <= visible_tokens, set(terms) - visible_tokens
            assert "绝密" not in terms  # only in the hidden document


def test_deep_codes_come_only_from_allowed_chunks() -> None:
    """The visible document "v" has a masked chunk naming ZZ-9999: with it masked no follow-up asks for it;
    unmasked (the control) it does, so the assertion can fail."""
    store = build(CHAIN)
    lever = Retriever(store, get_embedder("hash"), "deep").lever()
    assert isinstance(lever, Deep)
    query = "PX-2026-003 评审纪要"
    masked = chain_mask(store)
    open_mask = np.ones(len(store), dtype=bool)
    asked = {q for queries, _ in lever.plan(query, masked, 5)[1:] for q in queries}
    asked_open = {q for queries, _ in lever.plan(query, open_mask, 5)[1:] for q in queries}
    assert "ZZ-9999" in asked_open, asked_open
    assert "ZZ-9999" not in asked, asked


def test_codes_and_rm3_terms() -> None:
    assert codes_in("项目PRJ-2026-011采用GW-3105，零件 GW-3105-01 与 PO-2026-106; GW-3105 again; x-1 AB") == [
        "PRJ-2026-011",
        "GW-3105",
        "GW-3105-01",
        "PO-2026-106",
    ]
    terms = rm3_terms(["alpha beta beta gamma", "beta delta"], [3.0, 1.0], {"alpha"})
    assert "alpha" not in terms and abs(sum(terms.values()) - 1.0) < 1e-9
    assert max(terms, key=lambda t: terms[t]) == "beta"  # in both feedback texts, twice in the heavier one
    assert rm3_terms(["a b"], [0.0], set()) == {}


def test_deep_rejects_impossible_settings() -> None:
    store = build(CHAIN)
    retriever = Retriever(store, get_embedder("hash"), "hybrid")
    with pytest.raises(ValueError, match="rounds"):
        Deep(retriever, rounds=0)
    with pytest.raises(ValueError, match="quota"):
        Deep(retriever, rounds=4, quota=(0.1,))
    with pytest.raises(ValueError, match="quota"):
        Deep(retriever, rounds=3, quota=(0.7, 0.5))
    assert Deep(retriever, rounds=1).quota == ()
    assert deep_mod.ROUNDS == 3 and len(deep_mod.QUOTA) == deep_mod.ROUNDS - 1


def test_pipeline_names_accepted_and_unknown_refused(module_sim: Simulator) -> None:
    assert set(LEVERS) <= set(PIPELINES)
    store = build(CHAIN)
    for pipeline in PIPELINES:
        assert Retriever(store, get_embedder("hash"), pipeline).pipeline == pipeline
    with pytest.raises(
        ValueError, match="unknown pipeline 'deeper'; known: dense, bm25, hybrid, hierarchical, deep, prf"
    ):
        Retriever(store, get_embedder("hash"), "deeper")
    with pytest.raises(ValueError, match="unknown pipeline 'deeper'"):
        fresh_sim(SimConfig(embedder="hash", pipeline="deeper"))
    sim = fresh_sim(SimConfig(embedder="hash", pipeline="deep"))
    assert sim.retriever.pipeline == "deep"
    principal = sim.principal_for(sim.tokens.resolve(sim.tokens.eval_token), user_id="u001")
    assert sim.recall(principal, "员工手册", 5).hits  # through the mask and the per-hit re-check
    for pipeline in LEVERS:  # the playground's other-pipeline path, same mask and re-check
        outcome = module_sim.recall(principal, "budget report", 5, pipeline=pipeline)
        assert len(outcome.hits) == 5


def test_cli_accepts_the_levers_and_refuses_an_unknown_pipeline() -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["info", "--pipeline", "deep", "--embedder", "hash", "--json"], env={"COLUMNS": "200"})
    assert ok.exit_code == 0, ok.output
    assert '"pipeline": "deep"' in ok.output
    bad = runner.invoke(app, ["info", "--pipeline", "deeper", "--json"], env={"COLUMNS": "200"})
    assert bad.exit_code == 2, bad.output
    assert "unknown pipeline 'deeper'" in bad.output and "hierarchical" in bad.output


class _PipeRankModel:
    """A stand-in model that scores by the pipeline's rank: ``sign`` -1 keeps the order, +1 reverses it."""

    name = "pipe-rank"

    def __init__(self, sign: float) -> None:
        self.sign, self.meta = sign, {}

    def score(self, x: np.ndarray) -> np.ndarray:
        return self.sign * x[:, FEATURES.index("pipe_rank")]


def test_the_reranker_on_deeps_first_round_reorders_it_and_keeps_the_quota() -> None:
    """``ltr-first-round`` with deep reorders round 1 only: a model that keeps round 1's order gives exactly deep's
    answer (the bridge document of round 2 included), and one that reverses it puts round 1's last candidate
    first, both in the per-hop merge."""
    store = build(CHAIN)
    mask, query = chain_mask(store), "PX-2026-003 的整机有多大？"
    base = Retriever(store, get_embedder("hash"), "deep")
    alone = [h.doc_id for h in base.search(query, mask, 3)]
    assert "g" in alone  # the second link, from round 2's quota
    kept = RerankingRetriever(base, _PipeRankModel(-1.0), first_round=True).search(query, mask, 3)  # type: ignore[arg-type]
    assert [h.doc_id for h in kept] == alone
    lever = base.lever()
    assert isinstance(lever, Deep)
    first = lever.plan(query, mask, 3)[0][1]
    depth = max(3, DEFAULT_DEPTH)
    assert len(first) >= 2, "round 1 needs candidates to reorder"
    reversed_ = RerankingRetriever(base, _PipeRankModel(1.0), first_round=True).search(query, mask, 3)  # type: ignore[arg-type]
    assert reversed_[0].doc_id == first[: min(depth, len(first))][-1].doc_id
    assert reversed_[0].doc_id != alone[0]


@pytest.mark.parametrize("rerank", ["ltr", "ltr-first-round"])
def test_the_reranker_on_deep_never_uses_hidden_text(rerank: str) -> None:
    """The shipped model after deep or on its first round: the same answer with and without the hidden document."""
    embedder = get_embedder("hash")
    with_hidden, without = build({**CHAIN, **HIDDEN}), build(CHAIN)
    mask = chain_mask(with_hidden)
    for query in ("PX-2026-003 的整机有多大？", "项目 整机尺寸 预算", "PX-2026-003 备件"):
        for top_k in (2, 5):
            a = with_rerank(Retriever(with_hidden, embedder, "deep"), rerank).search(query, mask, top_k)
            b = with_rerank(Retriever(without, embedder, "deep"), rerank).search(query, mask[: len(without)], top_k)
            assert a == b and "h" not in {h.doc_id for h in a}, (query, a, b)
            check(with_hidden, with_rerank(Retriever(with_hidden, embedder, "deep"), rerank), query, mask, top_k)
