"""The hybrid pipeline's reciprocal-rank fusion (``retrieval.pipelines.fuse``, ``Fusion``): the documented
formula, its weights, depth and tie-breaks, on hand-made rankings (no model needed)."""

from __future__ import annotations

import pytest

from drivebench.search.retrieval.pipelines import (
    DEFAULT_FUSION,
    HYBRID_DEPTH,
    RRF_K,
    W_BM25,
    DocHit,
    Fusion,
    fuse,
)


def ranking(*docs: str, base: float = 1.0) -> list[DocHit]:
    return [DocHit(d, i, base - 0.01 * i) for i, d in enumerate(docs)]


def test_default_is_the_tuned_setting() -> None:
    # benchmarks/bench_fusion.py chose it on acme-zh@2 and it beat k=60/equal weights on the held-out acme-en@2
    assert DEFAULT_FUSION == Fusion(k=RRF_K, w_dense=1.0, w_bm25=W_BM25, depth=HYBRID_DEPTH) == Fusion(1, 1.0, 2.0, 50)
    dense, lexical = ranking("a", "b", "c"), ranking("c", "d")
    out = fuse(dense, lexical, 10)
    expected = {"a": 1 / 2, "b": 1 / 3, "c": 1 / 4 + 2 / 2, "d": 2 / 3}
    assert [h.doc_id for h in out] == ["c", "d", "a", "b"]
    assert {h.doc_id: h.score for h in out} == pytest.approx(expected, abs=1e-6)
    assert out[0].chunk_id == 2  # the dense best chunk is the one shown
    assert [h.doc_id for h in fuse(dense, lexical, 2)] == ["c", "d"]


def test_equal_weight_ties_go_to_the_dense_score() -> None:
    dense, lexical = ranking("a", "b", "c"), ranking("c", "d")
    out = fuse(dense, lexical, 10, Fusion(k=60, w_dense=1.0, w_bm25=1.0))
    assert [h.doc_id for h in out] == ["c", "a", "b", "d"]  # b and d tie at 1/62: b has a dense score
    assert {h.doc_id: h.score for h in out} == pytest.approx(
        {"a": 1 / 61, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}, abs=1e-6
    )


def test_weights_and_k_change_the_order_as_the_formula_says() -> None:
    dense, lexical = ranking("a", "b"), ranking("b", "a")
    assert [h.doc_id for h in fuse(dense, lexical, 2, Fusion(k=60, w_dense=1.0, w_bm25=1.0))] == ["a", "b"]  # tie
    assert [h.doc_id for h in fuse(dense, lexical, 2, Fusion(k=60, w_dense=1.0, w_bm25=2.0))] == ["b", "a"]
    assert [h.doc_id for h in fuse(dense, lexical, 2, Fusion(k=60, w_dense=3.0, w_bm25=2.0))] == ["a", "b"]
    # k sets how much agreement counts against one first place: y is 2nd in dense and 3rd in BM25, x 1st in dense only
    dense, lexical = ranking("x", "y"), ranking("z", "w", "y")
    assert fuse(dense, lexical, 1, Fusion(k=60, w_bm25=1.0))[0].doc_id == "y"  # 1/62 + 1/63 > 1/61
    assert fuse(dense, lexical, 1, Fusion(k=0.1, w_bm25=1.0))[0].doc_id == "x"  # 1/1.1 > 1/2.1 + 1/3.1


def test_depth_is_at_least_five_times_top_k() -> None:
    assert Fusion(depth=20).depth_for(10) == 50 and Fusion(depth=20).depth_for(2) == 20
    assert DEFAULT_FUSION.depth_for(10) == 50 and DEFAULT_FUSION.depth_for(30) == 150
