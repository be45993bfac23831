"""Hypothesis properties: metric ranges, recall ≤ 1 with duplicates, monotonicity in K, and the
scalar reference functions agree with the vectorised orchestrator."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from drivebench.evaluator.metrics.hit_rate import hit_rate
from drivebench.evaluator.metrics.mrr import mrr
from drivebench.evaluator.metrics.ndcg import ndcg
from drivebench.evaluator.metrics.recall import recall
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, RunRecord

DOCS = [f"d{i}" for i in range(12)]
KS = (1, 2, 3, 5, 10)

ranking = st.lists(st.sampled_from(DOCS), max_size=15)  # duplicates allowed (chunks of one file)
gold = st.dictionaries(st.sampled_from(DOCS), st.integers(1, 3), max_size=5)
case = st.lists(st.tuples(ranking, gold, st.booleans()), min_size=1, max_size=12)


def build(cases):
    qs, run = [], []
    for i, (ranked, grades, errored) in enumerate(cases):
        qs.append(
            EvalQuery(
                query_id=f"q{i}",
                query="q",
                user_role="r",
                gold=[{"doc_id": d, "grade": g} for d, g in grades.items()],
            )
        )
        run.append(RunRecord(query_id=f"q{i}", results=[{"doc_id": d} for d in ranked], error="e" if errored else None))
    return qs, run


@settings(max_examples=150, deadline=None)
@given(case)
def test_scalar_functions_match_score(cases) -> None:
    qs, run = build(cases)
    out = score(qs, run, KS, bootstrap=False)
    for (ranked, grades, errored), row in zip(cases, out["per_query"], strict=True):
        ranked = [] if errored else ranked
        for k in KS:
            for name, fn, g in (
                ("hit_rate", hit_rate, set(grades)),
                ("recall", recall, set(grades)),
                ("mrr", mrr, set(grades)),
                ("ndcg", ndcg, grades),
            ):
                expected = fn(ranked, g, k)
                got = row[f"{name}@{k}"]
                assert (got is None) == (expected is None), (name, k)
                if expected is not None:
                    assert math.isclose(got, expected, abs_tol=1e-12), (name, k, got, expected)


@settings(max_examples=150, deadline=None)
@given(case)
def test_metrics_in_unit_interval_and_monotone(cases) -> None:
    qs, run = build(cases)
    out = score(qs, run, KS, bootstrap=False)
    for row in out["per_query"]:
        previous = {"hit_rate": 0.0, "recall": 0.0, "mrr": 0.0}
        for k in KS:
            for name in ("hit_rate", "recall", "mrr", "ndcg"):
                v = row[f"{name}@{k}"]
                assert v is None or 0.0 <= v <= 1.0 + 1e-12
            for name in previous:  # non-decreasing in K (ndcg need not be)
                v = row[f"{name}@{k}"]
                if v is not None:
                    assert v >= previous[name]
                    previous[name] = v
    for k in KS:
        v = out["metrics"][f"recall@{k}"]
        assert v is None or v <= 1.0


@given(ranking, st.sets(st.sampled_from(DOCS), min_size=1, max_size=5))
def test_recall_never_exceeds_one_with_duplicates(ranked, g) -> None:
    doubled = [d for d in ranked for _ in range(3)]
    for k in (1, 5, 50):
        assert recall(doubled, g, k) <= 1.0
        assert hit_rate(doubled, g, k) <= hit_rate(doubled, g, k + 1)
