"""One test per scoring convention and edge case."""

from __future__ import annotations

import json

import pytest

from drivebench.evaluator.metrics.ndcg import ndcg
from drivebench.evaluator.metrics.recall import recall
from drivebench.evaluator.scoring import score

KS = (1, 3, 5, 10)


def rows(result: dict) -> dict[str, dict]:
    return {r["query_id"]: r for r in result["per_query"]}


def test_empty_run_is_not_measured_and_counts_every_query_missing(mkq) -> None:
    qs = [mkq("q1", ["a"]), mkq("q2", ["b"])]
    out = score(qs, [], KS, bootstrap=False)
    # nothing answered: no figure is computed (never a 0 that looks like a measurement)
    assert all(out["metrics"][f"hit_rate@{k}"] is None for k in KS)
    assert all(out["metrics_answered"][f"hit_rate@{k}"] is None for k in KS)
    assert out["errors"]["failed"] == 2 and out["errors"]["rate"] == 1.0
    assert out["errors"]["by_kind"]["missing"]["count"] == 2
    assert out["counts"]["missing_from_run"] == 2
    assert [r["status"] for r in out["per_query"]] == ["missing", "missing"]


def test_empty_result_list_is_a_miss_not_missing(mkq, mkr) -> None:
    out = score([mkq("q1", ["a"])], [mkr("q1", [])], KS, bootstrap=False)
    assert out["metrics"]["recall@10"] == 0.0
    assert out["counts"]["missing_from_run"] == 0 and out["counts"]["scored"] == 1


def test_query_without_gold_is_excluded_and_counted(mkq, mkr) -> None:
    qs = [mkq("q1", ["a"]), mkq("q2", [])]
    out = score(qs, [mkr("q1", ["a"]), mkr("q2", ["z"])], KS, bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == 1.0  # q2 not in the denominator
    assert out["counts"]["no_gold"] == 1
    assert rows(out)["q2"]["hit_rate@1"] is None and rows(out)["q2"]["ndcg@10"] is None


def test_ties_are_scored_in_returned_order(mkq, mkr) -> None:
    # equal scores: trec_eval would re-sort by doc id (descending) and put "z" first; we do not.
    run = [mkr("q1", [{"doc_id": "a", "score": 0.5}, {"doc_id": "z", "score": 0.5}])]
    out = score([mkq("q1", ["a"])], run, KS, bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == 1.0
    assert out["metrics"]["mrr@10"] == 1.0


def test_duplicate_chunks_count_once_at_first_rank(mkq, mkr) -> None:
    run = [mkr("q1", ["a", "a", "a", "b"])]
    out = score([mkq("q1", ["a", "b"])], run, KS, bootstrap=False)
    r = rows(out)["q1"]
    assert r["recall@3"] == 0.5  # "a" once; the copies take slots 2-3, "b" is at rank 4
    assert r["recall@10"] == 1.0  # never above 1
    assert r["mrr@10"] == 1.0
    assert recall(["a", "a", "a"], ["a"], 3) == 1.0
    assert r["ndcg@10"] == pytest.approx(ndcg(["a", "a", "a", "b"], {"a": 1, "b": 1}, 10))
    assert r["ndcg@10"] < 1.0


def test_fewer_results_than_k_uses_judged_ideal(mkq, mkr) -> None:
    qs = [mkq("q1", ["a", "b", "c"])]
    out = score(qs, [mkr("q1", ["a"])], KS, bootstrap=False)
    r = rows(out)["q1"]
    # IDCG from the 3 judged docs, not from the single retrieved one (which would give 1.0)
    ideal = 1 + 1 / 1.584962500721156 + 1 / 2.0
    assert r["ndcg@10"] == pytest.approx(1 / ideal)
    assert r["recall@10"] == pytest.approx(1 / 3)
    assert r["hit_rate@10"] == 1.0


def test_errored_query_is_a_miss_and_its_results_are_ignored(mkq, mkr) -> None:
    run = [mkr("q1", ["a"], error="HTTP 500"), mkr("q2", ["b"], error="read timed out"), mkr("q3", ["c"])]
    out = score([mkq("q1", ["a"]), mkq("q2", ["b"]), mkq("q3", ["c"])], run, KS, bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == pytest.approx(1 / 3)  # over all queries: errors are misses
    assert out["metrics_answered"]["hit_rate@1"] == 1.0  # over the one answered query
    assert out["counts"]["errors"] == 2 and out["counts"]["timeouts"] == 1
    assert rows(out)["q1"]["status"] == "error"
    kinds = out["errors"]["by_kind"]
    assert kinds["http_5xx"]["count"] == 1 and kinds["http_5xx"]["sample"] == "HTTP 500"
    assert kinds["timeout"]["queries"] == ["q2"]
    assert out["errors"]["rate"] == pytest.approx(2 / 3) and out["errors"]["answered"] == 1


def test_missing_query_stays_in_the_denominator(mkq, mkr) -> None:
    out = score([mkq("q1", ["a"]), mkq("q2", ["b"])], [mkr("q1", ["a"])], KS, bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == 0.5
    assert out["counts"]["missing_from_run"] == 1
    assert rows(out)["q2"]["status"] == "missing" and rows(out)["q2"]["hit_rate@1"] == 0.0


def test_unknown_and_duplicate_run_records_are_counted_first_wins(mkq, mkr) -> None:
    run = [mkr("q1", ["a"]), mkr("q1", ["z"]), mkr("zz", ["a"])]
    out = score([mkq("q1", ["a"])], run, KS, bootstrap=False)
    assert out["metrics"]["hit_rate@1"] == 1.0
    assert out["counts"]["duplicate_run_records"] == 1 and out["counts"]["unknown_in_run"] == 1


def test_citation_metrics_are_null_without_answers(mkq, mkr) -> None:
    out = score([mkq("q1", ["a"])], [mkr("q1", ["a"])], KS, bootstrap=False)
    for name in ("source_coverage", "source_coverage_macro", "citation_precision"):
        assert out["metrics"][name] is None
    assert out["citations"] is None


def test_unresolvable_citation_lowers_precision(mkq, mkr) -> None:
    run = [mkr("q1", ["a"], answer="见[[a]]与[不存在.pdf], 还有[注意]")]
    out = score([mkq("q1", ["a"])], run, KS, bootstrap=False)
    assert out["metrics"]["source_coverage"] == 1.0
    assert out["metrics"]["citation_precision"] == 0.5  # "[注意]" is prose: not counted
    assert out["citations"]["non_gold_citations"]["unresolvable"] == 1
    assert rows(out)["q1"]["citations"]["unresolvable"] == ["不存在.pdf"]


def test_queries_without_answer_cite_nothing_when_others_answer(mkq, mkr) -> None:
    run = [mkr("q1", ["a"], answer="[[a]]"), mkr("q2", ["b"]), mkr("q3", ["c"], error="boom", answer="[[c]]")]
    out = score([mkq("q1", ["a"]), mkq("q2", ["b"]), mkq("q3", ["c"])], run, KS, bootstrap=False)
    assert out["metrics"]["source_coverage"] == pytest.approx(1 / 3)
    assert out["metrics"]["citation_precision"] == 1.0
    assert out["citations"]["gold_docs"] == {
        "retrieved_cited": 1,
        "retrieved_not_cited": 1,  # q2: generation gap
        "cited_not_retrieved": 0,
        "neither": 1,  # q3 errored: nothing retrieved, nothing cited
    }


def test_citation_precision_is_null_when_nothing_is_cited(mkq, mkr) -> None:
    out = score([mkq("q1", ["a"])], [mkr("q1", ["a"], answer="没有引用。")], KS, bootstrap=False)
    assert out["metrics"]["source_coverage"] == 0.0
    assert out["metrics"]["citation_precision"] is None


def test_output_is_strict_json(mkq, mkr) -> None:
    qs = [mkq("q1", ["a"]), mkq("q2", [])]
    out = score(qs, [mkr("q1", ["a"], latency_ms=3.0)], KS)
    json.dumps(out, allow_nan=False)
    for key in ("metrics", "ci", "strata", "per_query", "counts", "config"):
        assert key in out
    for k in KS:
        for name in ("hit_rate", "recall", "mrr", "ndcg", "leak_rate", "hit_rate_permitted"):
            assert f"{name}@{k}" in out["metrics"]
        for name in ("version_exact_hit_rate", "stale_version_hit_rate", "trashed_hit_rate"):
            assert f"{name}@{k}" in out["metrics"]
    for name in ("multi_hop_completeness", "full_chain_rate", "latency_ms_p50", "latency_ms_p95", "latency_ms_p99"):
        assert name in out["metrics"]


def test_bad_cutoffs_are_rejected(mkq) -> None:
    with pytest.raises(ValueError):
        score([mkq("q1", ["a"])], [], (0, 5))


def test_duplicate_query_ids_in_evalset_are_rejected(mkq) -> None:
    with pytest.raises(ValueError):
        score([mkq("q1", ["a"]), mkq("q1", ["b"])], [])


def test_latency_percentiles_include_errors_and_skip_missing(mkq, mkr) -> None:
    qs = [mkq(f"q{i}", ["a"]) for i in range(4)]
    run = [mkr("q0", latency_ms=10.0), mkr("q1", latency_ms=20.0), mkr("q2", error="x", latency_ms=30.0)]
    m = score(qs, run, KS, bootstrap=False)["metrics"]
    assert m["latency_ms_p50"] == 20.0
    assert m["latency_ms_p99"] == pytest.approx(29.8)


def test_duplicate_gold_entries_first_wins(mkq, mkr) -> None:
    q = mkq("q1", [{"doc_id": "a", "grade": 3}, {"doc_id": "a", "grade": 1}, "b"])
    r = rows(score([q], [mkr("q1", ["b", "a"])], KS, bootstrap=False))["q1"]
    assert r["recall@10"] == 1.0  # |gold| = 2, not 3
    assert r["ndcg@10"] == pytest.approx(ndcg(["b", "a"], {"a": 3, "b": 1}, 10))
