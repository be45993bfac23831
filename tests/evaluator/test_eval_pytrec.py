"""hit_rate@K, recall@K, ndcg@K (binary and graded) and mrr equal pytrec_eval on random runs."""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from drivebench.evaluator.metrics.mrr import mrr
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, RunRecord

KS = (1, 3, 5, 10)
MEASURES = {"success.1,3,5,10", "recall.1,3,5,10", "ndcg_cut.1,3,5,10", "recip_rank"}


def _random_case(rng: random.Random, n_queries: int, graded: bool):
    queries: list[EvalQuery] = []
    run: list[RunRecord] = []
    qrels: dict[str, dict[str, int]] = {}
    trec_run: dict[str, dict[str, float]] = {}
    for i in range(n_queries):
        qid = f"q{i}"
        pool = [f"d{j}" for j in range(rng.randint(5, 40))]
        gold = rng.sample(pool, rng.randint(1, min(8, len(pool))))
        grades = {d: (rng.randint(1, 3) if graded else 1) for d in gold}
        ranked = rng.sample(pool, rng.randint(1, len(pool)))  # distinct docs, returned order
        queries.append(
            EvalQuery(
                query_id=qid,
                query="q",
                user_role="r",
                gold=[{"doc_id": d, "grade": g} for d, g in grades.items()],
            )
        )
        run.append(RunRecord(query_id=qid, results=[{"doc_id": d, "score": 1000.0 - r} for r, d in enumerate(ranked)]))
        qrels[qid] = grades
        trec_run[qid] = {d: 1000.0 - r for r, d in enumerate(ranked)}
    return queries, run, qrels, trec_run


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_matches_pytrec_eval(graded: bool) -> None:
    rng = random.Random(1234 + graded)
    queries, run, qrels, trec_run = _random_case(rng, 1500, graded)
    ours = score(queries, run, KS, bootstrap=False)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(trec_run)
    rows = {row["query_id"]: row for row in ours["per_query"]}
    assert set(rows) == set(theirs)
    for qid, ref in theirs.items():
        row = rows[qid]
        for k in KS:
            assert row[f"hit_rate@{k}"] == pytest.approx(ref[f"success_{k}"], abs=1e-9)
            assert row[f"recall@{k}"] == pytest.approx(ref[f"recall_{k}"], abs=1e-9)
            assert row[f"ndcg@{k}"] == pytest.approx(ref[f"ndcg_cut_{k}"], abs=1e-9)
        ranked = [d for d, _ in sorted(trec_run[qid].items(), key=lambda x: -x[1])]
        assert mrr(ranked, set(qrels[qid]), len(ranked)) == pytest.approx(ref["recip_rank"], abs=1e-9)
    for k in KS:
        for ours_name, ref_name in (("hit_rate", "success"), ("recall", "recall"), ("ndcg", "ndcg_cut")):
            mean_ref = sum(r[f"{ref_name}_{k}"] for r in theirs.values()) / len(theirs)
            assert ours["metrics"][f"{ours_name}@{k}"] == pytest.approx(mean_ref, abs=1e-9)


def test_mrr_without_cutoff_matches_recip_rank() -> None:
    queries, run, qrels, trec_run = _random_case(random.Random(99), 500, graded=False)
    ours = score(queries, run, (1000,), bootstrap=False)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(trec_run)
    for row in ours["per_query"]:
        assert row["mrr@1000"] == pytest.approx(theirs[row["query_id"]]["recip_rank"], abs=1e-9)


def test_one_thousand_small_runs_aggregate_like_pytrec_eval() -> None:
    rng = random.Random(7)
    for _ in range(1000):
        queries, run, qrels, trec_run = _random_case(rng, rng.randint(1, 6), graded=rng.random() < 0.5)
        ours = score(queries, run, KS, bootstrap=False)["metrics"]
        theirs = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(trec_run)
        for k in KS:
            for name, ref_name in (("hit_rate", "success"), ("recall", "recall"), ("ndcg", "ndcg_cut")):
                mean_ref = sum(r[f"{ref_name}_{k}"] for r in theirs.values()) / len(theirs)
                assert abs(ours[f"{name}@{k}"] - mean_ref) <= 1e-9
