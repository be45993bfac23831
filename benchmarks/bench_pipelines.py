"""Retrieval quality and speed of each pipeline (dense, bm25, hybrid) on the built-in corpora.

For each corpus the index is built once (real minilm embeddings); each pipeline then answers the whole
eval set in-process as each query's principal. Prints Hit@10 (and Hit@1, recall@10, MRR@10), mean
recall latency, and each pipeline's ratio against the `dense` baseline; writes
`benchmarks/results/bench_pipelines.json`. BENCH_QUICK=1 uses acme-* at small scale.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from drivebench.api import load_simulator
from drivebench.corpora.builtin import resolve_corpus
from drivebench.corpora.format import EVALSET_NAME
from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.schema import load_evalset
from drivebench.evaluator.targets.inprocess import InProcessTarget
from drivebench.simulator.retrieval.pipelines import PIPELINES, Retriever

OUT = Path(__file__).parent / "results" / "bench_pipelines.json"


def measure(corpus: str, scale: str | None) -> dict[str, dict[str, float]]:
    corpus_dir = resolve_corpus(corpus, scale=scale)
    sim = load_simulator(corpus_dir)
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    oracle = corpus_oracle(corpus_dir)
    out: dict[str, dict[str, float]] = {}
    for pipeline in PIPELINES:
        sim.retriever = Retriever(sim.store, sim.embedder, pipeline)
        started = time.perf_counter()
        ev = evaluate(InProcessTarget(sim), queries, run_config=RunConfig(top_k=10, concurrency=1), oracle=oracle)
        elapsed = time.perf_counter() - started
        m = ev.result["metrics"]
        out[pipeline] = {
            "hit_rate@1": m["hit_rate@1"],
            "hit_rate@10": m["hit_rate@10"],
            "recall@10": m["recall@10"],
            "mrr@10": m["mrr@10"],
            "leak_rate@10": m["leak_rate@10"],
            "ms_per_query": 1000 * elapsed / len(queries),
            "queries": len(queries),
        }
    return out


def main() -> None:
    quick = os.environ.get("BENCH_QUICK") == "1"
    scale = "small" if quick else None
    results: dict[str, object] = {"quick": quick, "corpora": {}}
    for corpus in ("acme-zh", "acme-en"):
        per = measure(corpus, scale)
        results["corpora"][corpus] = per  # type: ignore[index]
        base = per["dense"]
        print(f"\n{corpus} ({per['dense']['queries']} queries{', small scale' if quick else ''})")
        print(
            f"{'pipeline':<8} {'Hit@1':>7} {'Hit@10':>7} {'R@10':>7} {'MRR@10':>7} {'ms/q':>7} {'Hit@10 vs dense':>16}"
        )
        for name, m in per.items():
            ratio = m["hit_rate@10"] / base["hit_rate@10"] if base["hit_rate@10"] else float("inf")
            print(
                f"{name:<8} {m['hit_rate@1']:>7.3f} {m['hit_rate@10']:>7.3f} {m['recall@10']:>7.3f} "
                f"{m['mrr@10']:>7.3f} {m['ms_per_query']:>7.1f} {ratio:>15.2f}x"
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nwrote {OUT}")


if __name__ == "__main__":
    main()
