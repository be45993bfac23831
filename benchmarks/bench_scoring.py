"""Scoring speed: drivebench ``score()`` vs pytrec_eval on the same run, in the same process.

100,000 queries x 100 results (``BENCH_QUICK=1``: 10,000), 1-5 graded gold docs per query out of a
20,000-document corpus, distinct scores (score = 100 - rank). Both sides compute hit rate / success,
recall, MRR and nDCG at 1, 3, 5, 10 for every query.

* pytrec_eval: ``RelevanceEvaluator(qrels, measures)`` + ``evaluate(run)`` from its native dicts.
* drivebench: ``score(queries, run, bootstrap=False)`` from ``EvalQuery``/``RunRecord`` objects (the
  whole metrics.json: per-query rows, strata, counts), and the same with bootstrap CIs (1,000
  resamples). Building the objects is not timed, as building pytrec_eval's dicts is not.

The three are run interleaved, best of 3, so they share the machine's load. Prints wall and CPU
seconds and ``ours / pytrec`` (target <= 1.0) and writes ``benchmarks/results/bench_scoring.json`` and ``.md``.
Run: ``.venv/bin/python benchmarks/bench_scoring.py``.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytrec_eval

from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery, GoldDoc, RunHit, RunRecord

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

KS = (1, 3, 5, 10)
MEASURES = {"success.1,3,5,10", "recall.1,3,5,10", "recip_rank", "ndcg_cut.1,3,5,10"}


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


def measure(fns: dict[str, Callable[[], Any]], repeat: int) -> tuple[dict[str, float], dict[str, float], dict]:
    """Best wall and CPU seconds of each function, runs interleaved so all see the same machine load."""
    wall = dict.fromkeys(fns, float("inf"))
    cpu = dict.fromkeys(fns, float("inf"))
    outputs: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            w0, c0 = time.perf_counter(), time.process_time()
            outputs[name] = fn()
            wall[name] = min(wall[name], time.perf_counter() - w0)
            cpu[name] = min(cpu[name], time.process_time() - c0)
    return wall, cpu, outputs


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    n_queries = 10_000 if quick else 100_000
    repeat = 3
    data = make_data(n_queries, depth=100, n_docs=20_000)

    def run_pytrec() -> dict:
        return pytrec_eval.RelevanceEvaluator(data["qrels"], MEASURES).evaluate(data["trec_run"])

    wall, cpu, out = measure(
        {
            "pytrec_eval": run_pytrec,
            "score": lambda: score(data["queries"], data["run"], KS, bootstrap=False),
            "score_ci": lambda: score(data["queries"], data["run"], KS, bootstrap=True),
        },
        repeat,
    )
    ref, ours = out["pytrec_eval"], out["score"]
    # sanity: same numbers
    for ours_name, ref_name in (("ndcg@10", "ndcg_cut_10"), ("hit_rate@5", "success_5"), ("recall@3", "recall_3")):
        mean_ref = sum(r[ref_name] for r in ref.values()) / len(ref)
        assert abs(ours["metrics"][ours_name] - mean_ref) < 1e-9, (ours_name, ours["metrics"][ours_name], mean_ref)

    result = {
        "queries": n_queries,
        "results_per_query": 100,
        "metrics": "hit_rate/success, recall, mrr/recip_rank, ndcg/ndcg_cut @ 1,3,5,10",
        "wall_s": {k: round(v, 4) for k, v in wall.items()},
        "cpu_s": {k: round(v, 4) for k, v in cpu.items()},
        "ratio_ours_over_pytrec": round(wall["score"] / wall["pytrec_eval"], 4),
        "ratio_with_bootstrap_over_pytrec": round(wall["score_ci"] / wall["pytrec_eval"], 4),
        "cpu_ratio_ours_over_pytrec": round(cpu["score"] / cpu["pytrec_eval"], 4),
        "target_ratio": 1.0,
        "best_of": repeat,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    write_report("bench_scoring", result)
    print(f"{n_queries} queries x 100 results, IR metrics at {KS} (best of {repeat}, interleaved)")
    for name, label in (("pytrec_eval", "pytrec_eval"), ("score", "drivebench score()"), ("score_ci", "score() + CIs")):
        ratio = wall[name] / wall["pytrec_eval"]
        print(f"  {label:20s}: wall {wall[name]:7.3f} s  cpu {cpu[name]:7.3f} s  ratio {ratio:.3f}")
    print(f"  load average {os.getloadavg()[0]:.2f}")
    return 0 if wall["score"] <= wall["pytrec_eval"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
