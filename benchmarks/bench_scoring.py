"""Scoring speed: drivebench ``score()`` vs pytrec_eval on the same run, in the same process.

100,000 queries x 100 results (``BENCH_QUICK=1``: 10,000), 1-5 graded gold docs per query out of a
20,000-document corpus, distinct scores (score = 100 - rank). Both sides compute hit rate / success,
recall, MRR and nDCG at 1, 3, 5, 10 for every query.

* pytrec_eval: ``RelevanceEvaluator(qrels, measures)`` + ``evaluate(run)`` from its native dicts.
* drivebench: ``score(queries, run, bootstrap=False)`` from ``EvalQuery``/``RunRecord`` objects (the
  whole metrics.json: per-query rows, strata, counts), and the same with bootstrap CIs (1,000
  resamples). Building the objects is not timed, as building pytrec_eval's dicts is not.

Prints seconds and ``ours / pytrec`` (target <= 1.0) and writes ``benchmarks/results/bench_scoring.json``.
Run: ``.venv/bin/python benchmarks/bench_scoring.py``.
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytrec_eval

from drivebench.evaluator.schema import EvalQuery, GoldDoc, RunHit, RunRecord
from drivebench.evaluator.scoring import score

KS = (1, 3, 5, 10)
MEASURES = {"success.1,3,5,10", "recall.1,3,5,10", "recip_rank", "ndcg_cut.1,3,5,10"}
OUT = Path(__file__).parent / "results" / "bench_scoring.json"


def make_data(n_queries: int, depth: int, n_docs: int, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    doc_ids = [f"d{i:05d}" for i in range(n_docs)]
    hit_objects = [RunHit.model_construct(doc_id=d, version_id=None, score=None, rank=None) for d in doc_ids]
    queries, run, qrels, trec_run = [], [], {}, {}
    for i in range(n_queries):
        qid = f"q{i:06d}"
        gold = {doc_ids[j]: rng.randint(1, 3) for j in rng.sample(range(n_docs), rng.randint(1, 5))}
        ranked = rng.sample(range(n_docs), depth)
        # plant some gold in the ranking so the metrics are not all zero
        for d in gold:
            if rng.random() < 0.5:
                ranked[rng.randrange(depth)] = int(d[1:])
        ranked = list(dict.fromkeys(ranked))
        queries.append(
            EvalQuery.model_construct(
                query_id=qid,
                query="benchmark query",
                user_role="engineer",
                user_id=None,
                department=None,
                gold=[GoldDoc.model_construct(doc_id=d, version_id=None, grade=g) for d, g in gold.items()],
                hops=None,
                forbidden=[],
                allowed=None,
                tags={},
                as_of=None,
                answer_facts=[],
            )
        )
        run.append(
            RunRecord.model_construct(
                query_id=qid, results=[hit_objects[j] for j in ranked], latency_ms=1.0, error=None, answer=None
            )
        )
        qrels[qid] = gold
        trec_run[qid] = {doc_ids[j]: float(depth - r) for r, j in enumerate(ranked)}
    return {"queries": queries, "run": run, "qrels": qrels, "trec_run": trec_run}


def timed(fn, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    n_queries = 10_000 if quick else 100_000
    repeat = 3
    data = make_data(n_queries, depth=100, n_docs=20_000)

    def run_pytrec() -> dict:
        return pytrec_eval.RelevanceEvaluator(data["qrels"], MEASURES).evaluate(data["trec_run"])

    t_pytrec, ref = timed(run_pytrec, repeat)
    t_ours, ours = timed(lambda: score(data["queries"], data["run"], KS, bootstrap=False), repeat)
    t_boot, _ = timed(lambda: score(data["queries"], data["run"], KS, bootstrap=True), 1)

    # sanity: same numbers
    mean_ref = sum(r["ndcg_cut_10"] for r in ref.values()) / len(ref)
    assert abs(ours["metrics"]["ndcg@10"] - mean_ref) < 1e-9, (ours["metrics"]["ndcg@10"], mean_ref)
    mean_succ = sum(r["success_5"] for r in ref.values()) / len(ref)
    assert abs(ours["metrics"]["hit_rate@5"] - mean_succ) < 1e-9

    result = {
        "queries": n_queries,
        "results_per_query": 100,
        "metrics": "hit_rate/success, recall, mrr/recip_rank, ndcg/ndcg_cut @ 1,3,5,10",
        "pytrec_eval_s": round(t_pytrec, 4),
        "drivebench_score_s": round(t_ours, 4),
        "drivebench_score_with_bootstrap_s": round(t_boot, 4),
        "ratio_ours_over_pytrec": round(t_ours / t_pytrec, 4),
        "ratio_with_bootstrap_over_pytrec": round(t_boot / t_pytrec, 4),
        "target_ratio": 1.0,
        "best_of": repeat,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"{n_queries} queries x 100 results, IR metrics at {KS}")
    print(f"  pytrec_eval                : {t_pytrec:8.3f} s")
    print(f"  drivebench score()         : {t_ours:8.3f} s   ratio {t_ours / t_pytrec:.3f}")
    print(f"  drivebench score()+CIs     : {t_boot:8.3f} s   ratio {t_boot / t_pytrec:.3f}")
    print(f"  wrote {OUT}")
    return 0 if t_ours <= t_pytrec else 1


if __name__ == "__main__":
    raise SystemExit(main())
