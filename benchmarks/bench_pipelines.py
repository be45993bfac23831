"""Retrieval quality per pipeline x embedder on the built-in corpora, and encode throughput per embedder.

For each corpus and embedder the index is built once (real models; vectors come from the embedding
cache when present); each pipeline (dense, bm25, hybrid) then answers the whole eval set in-process as
each query's principal. Prints Hit@1, Hit@10, MRR@10 (and recall@10, ms/query) per pipeline x
embedder, each pipeline's Hit@10 ratio against the `bm25` baseline, and each embedder's raw encode
throughput (chunks/s on the corpus's own chunks, no cache) side by side; writes
`benchmarks/results/bench_pipelines.json` and `.md` (the table per corpus).
Per corpus and embedder it also reports multi-hop completeness and the full-chain rate per hop count (with
the number of chains of each length) and checks the bar a discriminating benchmark must meet: no pipeline at
Hit@10 >= 0.95 or Hit@1 >= 0.85, and MRR@10 spread between the best and the worst pipeline >= 0.15.
BENCH_QUICK=1 uses acme-* at small scale. BENCH_EMBEDDERS=e5,minilm selects embedders, BENCH_CORPORA
(default acme-zh@3,acme-en@3) corpora.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE, PIPELINES, Retriever
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

EMBEDDERS = [e for e in os.environ.get("BENCH_EMBEDDERS", "e5,minilm").split(",") if e]
# the discriminating sets (acme-*@1's questions name their documents: every lexical system aces them)
CORPORA = [c for c in os.environ.get("BENCH_CORPORA", "acme-zh@3,acme-en@3").split(",") if c]
BAR = {"max_hit@10": 0.95, "max_hit@1": 0.85, "min_mrr_spread": 0.15}
THROUGHPUT_SAMPLE = 192  # chunks per throughput measurement (the corpus's own, every n-th)


def encode_throughput(embedder_name: str, texts: list[str]) -> float:
    embedder = get_embedder(embedder_name)
    sample = texts[:: max(1, len(texts) // THROUGHPUT_SAMPLE)][:THROUGHPUT_SAMPLE]
    embedder.encode_passages(sample[:8])  # warm-up outside the timing
    started = time.perf_counter()
    embedder.encode_passages(sample)
    return len(sample) / (time.perf_counter() - started)


def measure(corpus: str, scale: str | None) -> dict[str, object]:
    corpus_dir = resolve_corpus(corpus, scale=scale)
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    oracle = corpus_oracle(corpus_dir)
    per: dict[str, dict[str, dict[str, float]]] = {}
    throughput: dict[str, float] = {}
    bars: dict[str, dict[str, object]] = {}
    for name in EMBEDDERS:
        sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(embedder=name), embedder=get_embedder(name))
        started = time.perf_counter()
        sim.ingest_all()
        print(f"  {corpus}: indexed {sim.store.n_alive} chunks with {name} in {time.perf_counter() - started:.1f} s")
        sim.corpus_dir = corpus_dir
        throughput[name] = encode_throughput(name, list(sim.store.texts))
        per[name] = {}
        for pipeline in PIPELINES:
            sim.retriever = Retriever(sim.store, sim.embedder, pipeline)
            started = time.perf_counter()
            ev = evaluate(InProcessTarget(sim), queries, run_config=RunConfig(top_k=10, concurrency=1), oracle=oracle)
            elapsed = time.perf_counter() - started
            m = ev.result["metrics"]
            per[name][pipeline] = {
                "hit_rate@1": m["hit_rate@1"],
                "hit_rate@10": m["hit_rate@10"],
                "mrr@10": m["mrr@10"],
                "recall@10": m["recall@10"],
                "leak_rate@10": m["leak_rate@10"],
                "ms_per_query": 1000 * elapsed / len(queries),
                "multi_hop_completeness": m["multi_hop_completeness"],
                "full_chain_rate": m["full_chain_rate"],
            }
        bars[name] = bar(per[name])
    chains = Counter(str(len(set(q.hops))) for q in queries if q.hops and len(set(q.hops)) >= 2)
    return {
        "queries": len(queries),
        "chunks": sim.store.n_alive,
        "chains_by_hops": dict(sorted(chains.items())),
        "results": per,
        "bar": bars,
        "chunks_per_s": throughput,
    }


def bar(pipes: dict[str, dict[str, float]]) -> dict[str, object]:
    """The discriminating-benchmark bar over one embedder's pipelines."""
    hit10 = max(m["hit_rate@10"] for m in pipes.values())
    hit1 = max(m["hit_rate@1"] for m in pipes.values())
    mrr = [m["mrr@10"] for m in pipes.values()]
    spread = max(mrr) - min(mrr)
    return {
        "max_hit@10": round(hit10, 4),
        "max_hit@1": round(hit1, 4),
        "mrr_spread": round(spread, 4),
        "ok": hit10 < BAR["max_hit@10"] and hit1 < BAR["max_hit@1"] and spread >= BAR["min_mrr_spread"],
    }


def main() -> None:
    quick = os.environ.get("BENCH_QUICK") == "1"
    scale = "small" if quick else None
    results: dict[str, object] = {
        "quick": quick,
        "embedders": EMBEDDERS,
        "default": {"pipeline": DEFAULT_PIPELINE, "rerank": SimConfig().rerank, "embedder": SimConfig().embedder},
        "corpora": {},
    }
    for corpus in CORPORA:
        data = measure(corpus, scale)
        results["corpora"][corpus] = data  # type: ignore[index]
        print(f"\n{corpus} ({data['queries']} queries, {data['chunks']} chunks{', small scale' if quick else ''})")
        print(f"{'embedder':<8} {'pipeline':<8} {'Hit@1':>7} {'Hit@10':>7} {'MRR@10':>7} {'ms/q':>7} {'vs bm25':>8}")
        for emb, pipes in data["results"].items():  # type: ignore[attr-defined]
            base = pipes["bm25"]["hit_rate@10"]
            for name, m in pipes.items():
                ratio = m["hit_rate@10"] / base if base else float("inf")
                print(
                    f"{emb:<8} {name:<8} {m['hit_rate@1']:>7.3f} {m['hit_rate@10']:>7.3f} {m['mrr@10']:>7.3f} "
                    f"{m['ms_per_query']:>7.1f} {ratio:>7.2f}x"
                )
            b = data["bar"][emb]  # type: ignore[index]
            print(
                f"{emb:<8} bar: max Hit@10 {b['max_hit@10']:.3f} (< 0.95), max Hit@1 {b['max_hit@1']:.3f} (< 0.85), "
                f"MRR@10 spread {b['mrr_spread']:.3f} (>= 0.15): {'met' if b['ok'] else 'NOT MET'}"
            )
            for name, m in pipes.items():
                done = ", ".join(
                    f"{h} hops {v:.3f} (full chain {m['full_chain_rate'].get(h, 0):.3f})"
                    for h, v in sorted((m["multi_hop_completeness"] or {}).items())
                )
                print(f"{emb:<8} {name:<8} multi-hop completeness@10: {done}")
        print(f"chains by hop count: {data['chains_by_hops']}")
        speeds = ", ".join(f"{e} {v:.1f}" for e, v in data["chunks_per_s"].items())  # type: ignore[attr-defined]
        print(f"encode throughput (chunks/s, raw, this corpus's chunks): {speeds}")
    write_report("bench_pipelines", results)


if __name__ == "__main__":
    main()
    sys.exit(0)
