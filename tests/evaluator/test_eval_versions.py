"""Version-pinned gold, stale versions and trashed results."""

from __future__ import annotations

from datetime import UTC, datetime

from drivebench.evaluator.catalog import Catalog, CatalogDoc
from drivebench.evaluator.metrics.stale_version import stale_version_hit
from drivebench.evaluator.metrics.trashed import trashed_hit
from drivebench.evaluator.metrics.version_exact import version_exact_hit
from drivebench.evaluator.scoring import score

KS = (1, 3)


def pinned(mkq, qid: str, doc: str, version: str | None):
    return mkq(qid, [{"doc_id": doc, "version_id": version}])


def test_exact_version_required_when_pinned(mkq, mkr) -> None:
    qs = [pinned(mkq, "q1", "a", "a-v2"), pinned(mkq, "q2", "a", "a-v2"), pinned(mkq, "q3", "a", "a-v2")]
    run = [mkr("q1", [("a", "a-v2")]), mkr("q2", [("a", "a-v1")]), mkr("q3", [("a", None)])]
    out = score(qs, run, KS, bootstrap=False)
    per = {r["query_id"]: r for r in out["per_query"]}
    assert out["metrics"]["hit_rate@1"] == 1.0
    assert [per[q]["version_exact_hit_rate@1"] for q in ("q1", "q2", "q3")] == [1.0, 0.0, 0.0]
    assert [per[q]["stale_version_hit_rate@1"] for q in ("q1", "q2", "q3")] == [0.0, 1.0, 0.0]  # None: unknown
    assert out["counts"]["version_pinned"] == 3


def test_unpinned_queries_are_excluded_and_metric_null_without_pins(mkq, mkr) -> None:
    qs = [pinned(mkq, "q1", "a", "a-v2"), mkq("q2", ["b"])]
    out = score(qs, [mkr("q1", [("a", "a-v2")]), mkr("q2", ["b"])], KS, bootstrap=False)
    assert out["metrics"]["version_exact_hit_rate@1"] == 1.0
    assert {r["query_id"]: r["version_exact_hit_rate@1"] for r in out["per_query"]} == {"q1": 1.0, "q2": None}
    out = score([mkq("q2", ["b"])], [mkr("q2", ["b"])], KS, bootstrap=False)
    assert out["metrics"]["version_exact_hit_rate@1"] is None and out["metrics"]["stale_version_hit_rate@1"] is None


def test_first_occurrence_decides_the_version(mkq, mkr) -> None:
    out = score([pinned(mkq, "q1", "a", "a-v2")], [mkr("q1", [("a", "a-v1"), ("a", "a-v2")])], KS, bootstrap=False)
    assert out["metrics"]["version_exact_hit_rate@3"] == 0.0 and out["metrics"]["stale_version_hit_rate@3"] == 1.0


def test_unpinned_gold_of_a_pinned_query_hits_on_doc_id(mkq, mkr) -> None:
    q = mkq("q1", [{"doc_id": "a", "version_id": "a-v2"}, {"doc_id": "b"}])
    out = score([q], [mkr("q1", [("b", "b-v9")])], KS, bootstrap=False)
    assert out["metrics"]["version_exact_hit_rate@1"] == 1.0


def test_version_scalars() -> None:
    pins = {"a": "a-v2", "b": None}
    assert version_exact_hit([("a", "a-v1"), ("b", None)], pins, 1) == 0.0
    assert version_exact_hit([("a", "a-v1"), ("b", None)], pins, 2) == 1.0
    assert stale_version_hit([("a", "a-v1")], pins, 1) == 1.0
    assert version_exact_hit([("a", "x")], {"a": None}, 1) is None


def test_trashed_results_at_query_time(mkq, mkr) -> None:
    cat = Catalog([CatalogDoc("t", trashed_at=datetime(2025, 3, 1, tzinfo=UTC))], now=datetime(2025, 6, 1, tzinfo=UTC))
    qs = [
        mkq("now", ["a"]),
        mkq("before", ["a"], as_of=datetime(2025, 2, 1, tzinfo=UTC)),
        mkq("after", ["a"], as_of=datetime(2025, 4, 1, tzinfo=UTC)),
        mkq("deep", ["a"]),
    ]
    run = [mkr("now", ["t"]), mkr("before", ["t"]), mkr("after", ["a", "t"]), mkr("deep", ["a", "b", "c", "t"])]
    out = score(qs, run, KS, catalog=cat, bootstrap=False)
    per = {r["query_id"]: r for r in out["per_query"]}
    assert [per[q]["trashed_hit_rate@3"] for q in ("now", "before", "after", "deep")] == [1.0, 0.0, 1.0, 0.0]
    assert out["metrics"]["trashed_hit_rate@1"] == 0.25


def test_trashed_is_null_without_catalog(mkq, mkr) -> None:
    out = score([mkq("q", ["a"])], [mkr("q", ["a"])], KS, bootstrap=False)
    assert out["metrics"]["trashed_hit_rate@1"] is None
    assert trashed_hit(["a", "t"], {"t"}.__contains__, 2) == 1.0
