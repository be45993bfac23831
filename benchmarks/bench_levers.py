"""Retrieval levers (``hierarchical``, ``deep``, ``prf``) against the default pipeline (``hybrid``, e5).

For each corpus the index is built once with the real e5 embedder (vectors from the embedding cache when
present); every pipeline then answers the whole eval set in-process as each query's principal. Prints, per
lever, Hit@1 / Hit@10 / MRR@10 and multi-hop completeness and full-chain rate per hop count, absolute and
as the paired difference to the default with its 95% bootstrap CI and sign-flip p-value
(``evaluator.stats.paired_compare``, what ``eval compare`` uses), the ratio to the default side by side, and
the ``deep`` pipeline's cost per round. Writes ``benchmarks/results/bench_levers.json`` and ``.md``.

Honest validation: the ``deep`` knobs are chosen on acme-en@3 built at seed 11 (``BENCH_TUNED``, a build no
check uses; first shown, labelled "tuned here"); acme-zh@3, acme-en@3 and acme-zh@3 at another seed and scale
(``BENCH_HELDOUT``, default seed 11 at scale 600) are the held-out checks. BENCH_CORPORA (default
acme-zh@3,acme-en@3) selects the default-seed corpora, BENCH_TUNED="" / BENCH_HELDOUT="" skip the other builds,
BENCH_QUICK=1 uses small scale.
"""

from __future__ import annotations

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
from drivebench.evaluator.stats import paired_compare
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import BASE_PIPELINE, LEVERS, Retriever
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import paired_cells, write_report

EMBEDDER = "e5"
CORPORA = [c for c in os.environ.get("BENCH_CORPORA", "acme-zh@3,acme-en@3").split(",") if c]
TUNED = os.environ.get("BENCH_TUNED", "acme-en@3:11:")  # corpus:seed:scale (empty: default), "" = none
HELDOUT = os.environ.get("BENCH_HELDOUT", "acme-zh@3:11:600")  # corpus:seed:scale, "" = none
PIPES = [p for p in os.environ.get("BENCH_PIPES", ",".join(LEVERS)).split(",") if p]
RETRIEVAL = ("hit_rate@1", "hit_rate@10", "mrr@10")
# the acceptance target for the best lever (3-hop completeness +0.15, 2-hop full chain >= 0.50, Hit@10 not lower)
TARGET = {"completeness_3_gain": 0.15, "full_chain_2": 0.50}


def per_query(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["query_id"]: row for row in result["per_query"]}


def paired(a: list[float], b: list[float]) -> dict[str, Any]:
    out = paired_compare(np.array(a, dtype=float), np.array(b, dtype=float))
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def compare_to_default(run: dict[str, Any], base: dict[str, Any], chains: dict[str, int]) -> dict[str, Any]:
    """Paired differences (run - default) on the retrieval metrics and, per hop count, completeness and full chain."""
    pr, pb = per_query(run), per_query(base)
    common = [q for q in pb if q in pr]
    out: dict[str, Any] = {}
    for name in RETRIEVAL:
        out[name] = paired([pr[q][name] for q in common], [pb[q][name] for q in common])
    for hops in sorted(set(chains.values())):
        ids = [q for q in common if chains.get(q) == hops]
        out[f"completeness_{hops}"] = paired(
            [pr[q]["multi_hop_completeness"] for q in ids], [pb[q]["multi_hop_completeness"] for q in ids]
        )
        out[f"full_chain_{hops}"] = paired(
            [float(pr[q]["full_chain"]) for q in ids], [float(pb[q]["full_chain"]) for q in ids]
        )
    return out


def measure(corpus: str, seed: int | None, scale: str | int | None) -> dict[str, Any]:
    corpus_dir = resolve_corpus(corpus, seed=seed, scale=scale)
    queries = load_evalset(corpus_dir / EVALSET_NAME)
    chains = {q.query_id: len(set(q.hops)) for q in queries if q.hops and len(set(q.hops)) >= 2}
    oracle = corpus_oracle(corpus_dir)
    sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(embedder=EMBEDDER), embedder=get_embedder(EMBEDDER))
    started = time.perf_counter()
    sim.ingest_all()
    sim.corpus_dir = corpus_dir
    print(
        f"  {corpus} (seed {seed}, scale {scale}): indexed {sim.store.n_alive} chunks in {time.perf_counter() - started:.1f} s"
    )
    runs: dict[str, dict[str, Any]] = {}
    absolute: dict[str, dict[str, Any]] = {}
    costs: list[dict[str, float]] = []
    for pipeline in [BASE_PIPELINE, *PIPES]:
        sim.retriever = Retriever(sim.store, sim.embedder, pipeline)
        started = time.perf_counter()
        ev = evaluate(InProcessTarget(sim), queries, run_config=RunConfig(top_k=10, concurrency=1), oracle=oracle)
        elapsed = time.perf_counter() - started
        runs[pipeline] = ev.result
        m = ev.result["metrics"]
        absolute[pipeline] = {
            **{name: round(m[name], 4) for name in RETRIEVAL},
            "leak_rate@10": m["leak_rate@10"],
            "ms_per_query": round(1000 * elapsed / len(queries), 2),
            "multi_hop_completeness": m["multi_hop_completeness"],
            "full_chain_rate": m["full_chain_rate"],
        }
        if pipeline == "deep":
            costs = sim.retriever.lever().cost_summary()  # type: ignore[attr-defined]
    base = runs[BASE_PIPELINE]
    return {
        "queries": len(queries),
        "chunks": sim.store.n_alive,
        "chains_by_hops": {str(h): sum(1 for v in chains.values() if v == h) for h in sorted(set(chains.values()))},
        "absolute": absolute,
        "vs_default": {p: compare_to_default(runs[p], base, chains) for p in PIPES},
        "deep_cost_per_round": costs,
    }


def show(label: str, data: dict[str, Any]) -> None:
    print(f"\n{label} ({data['queries']} queries, {data['chunks']} chunks, chains {data['chains_by_hops']})")
    print(f"{'pipeline':<13} {'Hit@1':>7} {'Hit@10':>7} {'MRR@10':>7} {'ms/q':>7} {'Hit@10 vs default':>18}")
    base = data["absolute"][BASE_PIPELINE]
    for name, m in data["absolute"].items():
        ratio = m["hit_rate@10"] / base["hit_rate@10"] if base["hit_rate@10"] else float("inf")
        print(
            f"{name:<13} {m['hit_rate@1']:>7.3f} {m['hit_rate@10']:>7.3f} {m['mrr@10']:>7.3f} {m['ms_per_query']:>7.1f} {ratio:>17.2f}x"
        )
        done = ", ".join(
            f"{h} hops {v:.3f} (full chain {m['full_chain_rate'].get(h, 0):.3f})"
            for h, v in sorted((m["multi_hop_completeness"] or {}).items())
        )
        print(f"{'':<13} completeness@10: {done}")
    for name, cmp in data["vs_default"].items():
        print(f"{name} - {BASE_PIPELINE}:\n    " + "\n    ".join(paired_cells(cmp)))
    for row in data["deep_cost_per_round"]:
        print(
            f"deep round {row['round']}: reached by {row['calls']} searches, {row['queries_per_call']:.2f} queries "
            f"each, {row['ms_per_call']:.1f} ms per search"
        )


def target_met(data: dict[str, Any], pipeline: str) -> bool:
    cmp, absolute = data["vs_default"][pipeline], data["absolute"][pipeline]
    c3, h10 = cmp.get("completeness_3"), cmp["hit_rate@10"]
    full2 = absolute["full_chain_rate"].get("2", 0.0)
    return bool(
        c3
        and c3["diff"] >= TARGET["completeness_3_gain"]
        and c3["ci"]
        and c3["ci"][0] > 0
        and full2 >= TARGET["full_chain_2"]
        and h10["diff"] >= 0
    )


def main() -> None:
    quick = os.environ.get("BENCH_QUICK") == "1"

    def build(spec: str, role: str) -> tuple[str, str, int | None, str | int | None]:
        name, seed, scale = spec.split(":")
        size: str | int | None = (int(scale) if scale.isdigit() else scale) if scale else None
        label = f"{name} seed {seed}" + (f" scale {scale}" if scale else "") + role
        return label, name, int(seed), "small" if quick and size is None else size

    sets: list[tuple[str, str, int | None, str | int | None]] = [build(TUNED, " (tuned here)")] if TUNED else []
    sets += [(c, c, None, "small" if quick else None) for c in CORPORA]
    if HELDOUT:
        sets.append(build(HELDOUT, ""))
    results: dict[str, Any] = {
        "quick": quick,
        "embedder": EMBEDDER,
        "default": BASE_PIPELINE,
        "levers": PIPES,
        "tuned_on": TUNED.rstrip(":") or None,
        "target": TARGET,
        "corpora": {},
    }
    for label, corpus, seed, scale in sets:
        data = measure(corpus, seed, scale)
        data["target_met"] = {p: target_met(data, p) for p in PIPES}
        results["corpora"][label] = data
        show(label, data)
        print(
            "target (3-hop +0.15 with CI > 0, 2-hop full chain >= 0.50, Hit@10 not lower): "
            + ", ".join(f"{p} {'met' if ok else 'not met'}" for p, ok in data["target_met"].items())
        )
    write_report("bench_levers", results)


if __name__ == "__main__":
    main()
    sys.exit(0)
