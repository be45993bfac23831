"""Leaks, the eval-set oracle, permission-filtered hit rate and refusals."""

from __future__ import annotations

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.metrics.hit_rate_permitted import hit_rate_permitted
from drivebench.evaluator.metrics.leak_rate import leak, leaked_docs, oracle_from_evalset
from drivebench.evaluator.scoring import score

KS = (1, 3)


def test_oracle_from_evalset_rules(mkq) -> None:
    q_forbid = mkq("q1", ["a"], forbidden=["s"])
    q_allow = mkq("q2", ["a"], allowed=["a", "b"], forbidden=["b"])
    may = oracle_from_evalset([q_forbid, q_allow])
    assert not may(q_forbid, "s") and may(q_forbid, "anything-unknown")  # unknown docs allowed
    assert may(q_allow, "a") and not may(q_allow, "b") and not may(q_allow, "c")  # outside allowed


def test_leak_rate_counts_queries_with_a_forbidden_result(mkq, mkr) -> None:
    qs = [mkq("q1", ["a"], forbidden=["s"]), mkq("q2", ["b"], forbidden=["s"]), mkq("q3", [], forbidden=["s"])]
    run = [mkr("q1", ["a", "s"]), mkr("q2", ["s", "s", "b"]), mkr("q3", ["x"])]
    out = score(qs, run, KS, oracle="evalset", bootstrap=False)
    assert out["metrics"]["leak_rate@1"] == 1 / 3  # no-gold q3 still in the denominator
    assert out["metrics"]["leak_rate@3"] == 2 / 3
    assert out["counts"]["queries_with_leak"] == 2
    assert out["leaks"]["documents"] == [{"doc_id": "s", "queries": 2, "secret_level": "unknown"}]
    assert {r["query_id"]: r["leaked"] for r in out["per_query"]} == {"q1": ["s"], "q2": ["s"], "q3": []}


def test_leaks_by_secret_level_use_the_catalog(mkq, mkr) -> None:
    cat = Catalog([CatalogDoc("s", secret_level="secret"), CatalogDoc("c", secret_level="confidential")])
    qs = [mkq("q1", ["a"], forbidden=["s", "c"])]
    out = score(qs, [mkr("q1", ["c", "s", "a"])], KS, oracle="evalset", catalog=cat, bootstrap=False)
    assert out["leaks"]["by_secret_level"] == {"confidential": 1, "secret": 1}


def test_leak_metrics_are_null_without_oracle(mkq, mkr) -> None:
    out = score([mkq("q1", ["a"], forbidden=["s"])], [mkr("q1", ["s"])], KS, bootstrap=False)
    assert out["metrics"]["leak_rate@1"] is None and out["metrics"]["hit_rate_permitted@1"] is None
    assert out["leaks"] is None


def test_custom_oracle_callable(mkq, mkr) -> None:
    def may(query, doc_id: str) -> bool:
        return not doc_id.startswith("secret-")

    out = score([mkq("q1", ["a"])], [mkr("q1", ["secret-1", "a"])], KS, oracle=may, bootstrap=False)
    assert out["metrics"]["leak_rate@1"] == 1.0


def test_hit_rate_permitted_ignores_forbidden_gold(mkq, mkr) -> None:
    q = mkq("q1", ["s", "a"], forbidden=["s"])
    out = score([q], [mkr("q1", ["s", "a"])], KS, oracle="evalset", bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == 1.0  # plain hit rate credits the forbidden doc
    assert out["metrics"]["hit_rate_permitted@1"] == 0.0  # the permitted one is only at rank 2
    assert out["metrics"]["hit_rate_permitted@3"] == 1.0


def test_refusal_is_correct_when_nothing_forbidden_comes_back(mkq, mkr) -> None:
    qs = [
        mkq("r1", ["s"], forbidden=["s"]),  # gold all forbidden
        mkq("r2", [], forbidden=["s"]),  # no gold, relevant doc forbidden
        mkq("r3", ["s"], forbidden=["s"]),
        mkq("r4", ["s"], forbidden=["s"]),
        mkq("plain", []),  # no gold, nothing forbidden: excluded
    ]
    run = [mkr("r1", []), mkr("r2", ["x"]), mkr("r3", ["x", "s"]), mkr("r4", error="500"), mkr("plain", ["x"])]
    out = score(qs, run, KS, oracle="evalset", bootstrap=False)
    per = {r["query_id"]: r for r in out["per_query"]}
    assert [per[q]["hit_rate_permitted@1"] for q in ("r1", "r2", "r3", "r4")] == [1.0, 1.0, 1.0, 0.0]
    assert per["r3"]["hit_rate_permitted@3"] == 0.0  # leaked within top 3
    assert per["plain"]["hit_rate_permitted@1"] is None
    assert out["counts"]["refusals"] == 4


def test_scalar_functions() -> None:
    may = {"a": True, "s": False}.get
    assert leaked_docs(["a", "s", "s"], lambda d: may(d, True)) == ["s"]
    assert leak(["a", "s"], lambda d: may(d, True), 1) == 0.0
    assert hit_rate_permitted(["s", "a"], ["s", "a"], ["s"], lambda d: may(d, True), 1) == 0.0
    assert hit_rate_permitted([], ["s"], ["s"], lambda d: may(d, True), 1) == 1.0
    assert hit_rate_permitted([], ["s"], ["s"], lambda d: may(d, True), 1, ok=False) == 0.0
    assert hit_rate_permitted(["x"], [], [], lambda d: True, 1) is None
