"""The learned reranker (`--rerank ltr`) against the same pipeline without it: quality on the default builds it was
not trained on, and the latency it adds to a recall, side by side in one process.

Quality: on acme-zh@3 and acme-en@3 at their default seed (the shipped model was trained on builds with seeds 11,
23 and 31 only, see `models/rerank-v3.meta.json`), the whole eval set is answered in-process at top_k 10 by the
base pipeline (hybrid, whose candidates the model was trained on) and by it followed by the reranker; each metric's paired difference (rerank − baseline), its
95% paired bootstrap CI and its sign-flip randomization p-value (`evaluator.scoring.compare`, as `eval compare`
does): Hit@1, Hit@10, MRR@10 and multi-hop completeness / full-chain rate per hop count.
Latency: on acme-zh@3, every eval question is recalled at top_k 10 as its user with and without the reranker,
alternating which goes first, after a warm-up; p50/p95 of each, the difference of the p50s and the median of the
per-question differences with its bootstrap interval. Target: the reranker adds <= 5 ms p50.
Writes `benchmarks/results/bench_rerank.json` and `.md`.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.scoring import compare
from drivebench.evaluator.stats import paired_compare
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.retrieval.pipelines import BASE_PIPELINE
from drivebench.search.retrieval.rerank import shipped_reranker, with_rerank
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import report_checks

RERANK = "ltr"
CORPORA = [c for c in os.environ.get("BENCH_CORPORA", "acme-zh@3,acme-en@3").split(",") if c]
LATENCY_CORPUS = "acme-zh@3"
TOP_K = 10
TARGET_ADDED_P50_MS = 5.0
WARMUP = 20
QUALITY = ("hit_rate@1", "hit_rate@10", "mrr@10")


def _pct(values: list[float], q: float) -> float:
    return float(np.quantile(np.asarray(values), q))


def load(corpus: str) -> tuple[Simulator, Path]:
    corpus_dir = resolve_corpus(corpus)
    sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(pipeline=BASE_PIPELINE, rerank=None))
    sim.ingest_all()
    sim.corpus_dir = corpus_dir
    return sim, corpus_dir


def quality(sim: Simulator, corpus_dir: Path) -> dict[str, Any]:
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    oracle = corpus_oracle(corpus_dir)
    base = sim.retriever
    runs = {}
    for name, retriever in (("baseline", base), ("rerank", with_rerank(base, RERANK, sim.folder_path_now))):
        sim.retriever = retriever  # type: ignore[assignment]
        ev = evaluate(InProcessTarget(sim), queries, run_config=RunConfig(top_k=TOP_K, concurrency=1), oracle=oracle)
        runs[name] = ev.result
    sim.retriever = base
    cmp = compare(runs["rerank"], runs["baseline"])["metrics"]
    wanted = [m for m in QUALITY if m in cmp]
    rows = [quality_row(m, cmp[m]) for m in wanted]
    rows += by_hops(runs["rerank"], runs["baseline"])
    return {"queries": len(queries), "rows": rows}


def quality_row(metric: str, row: dict[str, Any]) -> dict[str, Any]:
    """One report row from a paired comparison (rerank is ``a``, the baseline ``b``)."""
    return {
        "metric": metric,
        "n": row["n"],
        "baseline": round(row["mean_b"], 4),
        "rerank": round(row["mean_a"], 4),
        "diff": round(row["diff"], 4),
        "ci_lo": round(row["ci"][0], 4),
        "ci_hi": round(row["ci"][1], 4),
        "p_value": round(row["p_value"], 4),
    }


def by_hops(run: dict[str, Any], baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """Multi-hop completeness and full-chain rate per hop count (chains of 2 documents or more), paired."""
    pa = {r["query_id"]: r for r in run["per_query"]}
    pb = {r["query_id"]: r for r in baseline["per_query"]}
    counts = sorted({int(r["hops"]) for r in pb.values() if r.get("hops") is not None and r["hops"] >= 2})
    rows = []
    for hops in counts:
        ids = [q for q, r in pb.items() if r.get("hops") == hops and q in pa]
        for column, label in (("multi_hop_completeness", "multi_hop_completeness"), ("full_chain", "full_chain_rate")):
            a = [math.nan if pa[q].get(column) is None else pa[q][column] for q in ids]
            b = [math.nan if pb[q].get(column) is None else pb[q][column] for q in ids]
            rows.append(quality_row(f"{label}[{hops}]", paired_compare(a, b)))
    return rows


def latency(sim: Simulator, corpus_dir: Path) -> dict[str, Any]:
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    token = sim.tokens.resolve(sim.tokens.eval_token)
    assert token is not None
    base = sim.retriever
    reranked = with_rerank(base, RERANK, sim.folder_path_now)
    principals = [
        sim.principal_for(token, user_id=q.user_id, user_role=q.user_role, department=q.department) for q in queries
    ]
    times: dict[str, list[float]] = {"baseline": [], "rerank": []}

    def timed(name: str, i: int) -> float:
        sim.retriever = base if name == "baseline" else reranked  # type: ignore[assignment]
        t0 = time.perf_counter()
        sim.recall(principals[i], queries[i].query, TOP_K)
        return 1000 * (time.perf_counter() - t0)

    for i in range(min(WARMUP, len(queries))):
        timed("baseline", i)
        timed("rerank", i)
    for i in range(len(queries)):
        order = ("baseline", "rerank") if i % 2 == 0 else ("rerank", "baseline")
        for name in order:
            times[name].append(timed(name, i))
    sim.retriever = base
    d = np.asarray(times["rerank"]) - np.asarray(times["baseline"])
    rng = np.random.default_rng(0)
    medians = np.median(d[rng.integers(0, len(d), (2000, len(d)))], axis=1)
    lo, hi = np.quantile(medians, [0.025, 0.975])
    out: dict[str, Any] = {"queries": len(queries), "top_k": TOP_K}
    for name, values in times.items():
        out[f"{name}_p50_ms"] = round(_pct(values, 0.5), 2)
        out[f"{name}_p95_ms"] = round(_pct(values, 0.95), 2)
    out["added_p50_ms"] = round(out["rerank_p50_ms"] - out["baseline_p50_ms"], 2)
    out["paired_median_added_ms"] = round(float(np.median(d)), 2)
    out["paired_median_ci_ms"] = [round(float(lo), 2), round(float(hi), 2)]
    out["ratio_p50"] = round(out["rerank_p50_ms"] / out["baseline_p50_ms"], 3)
    return out


def main() -> None:
    meta = shipped_reranker(RERANK).meta
    result: dict[str, Any] = {
        "rerank": RERANK,
        "pipeline": BASE_PIPELINE,
        "trained_on": [f"{c['corpus']} seed {c['seed']}" for c in meta["corpora"]],
        "trees": meta["trees"],
        "questions": {},
        "quality": [],  # one row per corpus and metric: rerank - baseline, paired
    }
    for corpus in CORPORA:
        sim, corpus_dir = load(corpus)
        q = quality(sim, corpus_dir)
        result["questions"][corpus] = q["queries"]
        result["quality"] += [{"corpus": corpus, **row} for row in q["rows"]]
        print(f"\n{corpus} ({q['queries']} questions): rerank - {BASE_PIPELINE}, paired bootstrap 95% CI")
        for row in q["rows"]:
            print(
                f"  {row['metric']:<28} {row['baseline']:.3f} -> {row['rerank']:.3f}  "
                f"{row['diff']:+.3f} [{row['ci_lo']:+.3f}, {row['ci_hi']:+.3f}] p={row['p_value']:.4f} (n={row['n']})"
            )
        if corpus == LATENCY_CORPUS:
            lat = latency(sim, corpus_dir)
            result["latency"] = lat
            print(
                f"  latency top_k {TOP_K}: baseline p50 {lat['baseline_p50_ms']} ms p95 {lat['baseline_p95_ms']} ms; "
                f"rerank p50 {lat['rerank_p50_ms']} ms p95 {lat['rerank_p95_ms']} ms; added p50 {lat['added_p50_ms']} ms "
                f"(paired median {lat['paired_median_added_ms']} ms {lat['paired_median_ci_ms']}), x{lat['ratio_p50']}"
            )
    checks = {}
    if "latency" in result:
        checks[f"the reranker adds <= {TARGET_ADDED_P50_MS} ms p50 at top_k {TOP_K} on {LATENCY_CORPUS}"] = (
            result["latency"]["added_p50_ms"] <= TARGET_ADDED_P50_MS
        )
    report_checks("bench_rerank", result, checks)


if __name__ == "__main__":
    main()
