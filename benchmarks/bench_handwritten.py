"""The retrieval configurations on the hand-written eval sets: the held-out one and the two dev sets.

The generated eval sets follow the generator's question templates; a learned stage or a tuned knob can fit those
templates rather than the questions people ask. The hand-written sets (``benchmarks/data/heldout/``, never tuned
on, and ``benchmarks/data/dev/``, tuning sets) are the check: each is answered in-process at top_k 10, as each
question's asker, by the base pipeline (``hybrid``, e5; the default until the second held-out set confirmed the
switch), by ``deep``, by both followed by the shipped reranker (``--rerank ltr``), and by ``deep`` with the
reranker on its first round (``--rerank ltr-first-round``); the default (``SimConfig()``: deep with the reranker
on its first round) is marked, and the reranker after deep is compared with it (printed, not judged). Per set and configuration: Hit@1, Hit@10, MRR@10 with their bootstrap 95% CIs, the
paired difference to ``hybrid`` with its CI and sign-flip p (``evaluator.stats.paired_compare``, what
``eval compare`` uses) and the ratio to it side by side, ms per evaluated question, and the recall's own
p50/p95 (``Simulator.recall``, the configurations interleaved per question so machine load hits them alike).

The default builds' own generated eval sets (acme-zh@3 and acme-en@3) are scored the same way, with multi-hop
completeness and the full-chain rate per hop count added: the default must not lose anything there either.

Target (the improvement loop's acceptance): on the held-out sets, the default reaches Hit@1 >= 0.80 and
Hit@10 >= 0.95; on every set it loses no metric to hybrid (no paired CI below 0). The exit code is 1 when it
does not (``benchmarks/report.report_checks``).
Writes ``benchmarks/results/bench_handwritten.json`` and ``.md``. BENCH_SETS (comma-separated names) selects sets.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
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
from drivebench.evaluator.stats import bootstrap_ci, paired_compare
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import BASE_PIPELINE
from drivebench.search.retrieval.rerank import resolve_rerank
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import paired_cells, report_checks

DATA = Path(__file__).resolve().parent / "data"
EMBEDDER = "e5"
METRICS = ("hit_rate@1", "hit_rate@10", "mrr@10")
# (pipeline, rerank): the base pipeline first, the baseline of every comparison
CONFIGS: list[tuple[str, str | None]] = [
    (BASE_PIPELINE, None),
    ("deep", None),
    (BASE_PIPELINE, "ltr"),
    ("deep", "ltr"),  # the reranker after deep's merged result
    ("deep", "ltr-first-round"),  # the reranker on deep's first round: the default (the fourth held-out set's check)
]
TARGET = {"hit_rate@1": 0.80, "hit_rate@10": 0.95}
# the default, as SimConfig() resolves it with this benchmark's embedder (the dev sets chose it: equal Hit@1 and
# MRR@10 to hybrid+ltr there, higher Hit@10)
DEFAULT = (SimConfig().pipeline, resolve_rerank(SimConfig().rerank, EMBEDDER))
ALTERNATIVE = ("deep", "ltr")  # compared with the default on every set (printed, not judged)
LATENCY_QUESTIONS = 60  # per set: the recall p50/p95 of each configuration


@dataclass(frozen=True)
class HandWrittenSet:
    name: str
    path: Path | None  # None: the build's own generated evalset.jsonl
    corpus: str
    seed: int | None  # None: the default seed
    split: str  # heldout: never tuned on; dev: may be tuned on; generated: the default build's own set


SETS = [
    HandWrittenSet(
        "heldout-acme-zh-v3", DATA / "heldout" / "acme-zh-v3-handwritten.jsonl", "acme-zh@3", None, "heldout"
    ),
    # first scored to check the candidate default chosen on the dev sets (deep + the reranker), then kept here
    HandWrittenSet(
        "heldout-acme-zh-v3-2", DATA / "heldout" / "acme-zh-v3-handwritten-2.jsonl", "acme-zh@3", None, "heldout"
    ),
    # written for the check of the reranker on deep's first round (README: the rule, fixed before it was scored;
    # the check kept the default then, and the set is spent)
    HandWrittenSet(
        "heldout-acme-en-v3-3", DATA / "heldout" / "acme-en-v3-handwritten-3.jsonl", "acme-en@3", None, "heldout"
    ),
    # written for the check of rerank-v3 and of where it goes after deep (README: the rule, fixed before it was scored)
    HandWrittenSet(
        "heldout-acme-en-v3-4", DATA / "heldout" / "acme-en-v3-handwritten-4.jsonl", "acme-en@3", None, "heldout"
    ),
    HandWrittenSet("dev-acme-en-v3", DATA / "dev" / "acme-en-v3-handwritten-dev.jsonl", "acme-en@3", None, "dev"),
    HandWrittenSet("dev-acme-zh-v3-s11", DATA / "dev" / "acme-zh-v3-s11-handwritten-dev.jsonl", "acme-zh@3", 11, "dev"),
    HandWrittenSet("generated-acme-zh-v3", None, "acme-zh@3", None, "generated"),
    HandWrittenSet("generated-acme-en-v3", None, "acme-en@3", None, "generated"),
]


def label(pipeline: str, rerank: str | None) -> str:
    return pipeline + (f"+{rerank}" if rerank else "")


def measure(hand: HandWrittenSet) -> dict[str, Any]:
    corpus_dir = resolve_corpus(hand.corpus, seed=hand.seed)
    queries = load_evalset(hand.path or corpus_dir / EVALSET_NAME)
    chains = {q.query_id: len(set(q.hops)) for q in queries if q.hops and len(set(q.hops)) >= 2}
    oracle = corpus_oracle(corpus_dir)
    sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(embedder=EMBEDDER), embedder=get_embedder(EMBEDDER))
    sim.ingest_all()
    sim.corpus_dir = corpus_dir
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    absolute: dict[str, dict[str, Any]] = {}
    retrievers = {label(p, r): sim.make_retriever(p, r) for p, r in CONFIGS}
    for pipeline, rerank in CONFIGS:
        name = label(pipeline, rerank)
        sim.retriever = retrievers[name]
        started = time.perf_counter()
        ev = evaluate(InProcessTarget(sim), queries, run_config=RunConfig(top_k=10, concurrency=1), oracle=oracle)
        elapsed = time.perf_counter() - started
        rows = {r["query_id"]: r for r in ev.result["per_query"]}
        per_query[name] = rows
        m = ev.result["metrics"]
        absolute[name] = {
            **{k: round(m[k], 4) for k in METRICS},
            **{
                f"{k}_ci": [round(v, 4) for v in bootstrap_ci(np.array([r[k] for r in rows.values()]))] for k in METRICS
            },
            "leak_rate@10": m["leak_rate@10"],
            "failed": int((ev.result.get("errors") or {}).get("failed") or 0),  # counted, and a check below
            "ms_per_query": round(1000 * elapsed / len(queries), 2),
            "multi_hop_completeness": m.get("multi_hop_completeness"),
            "full_chain_rate": m.get("full_chain_rate"),
        }
    for name, ms in recall_latency(sim, retrievers, queries).items():
        absolute[name]["recall_ms_p50"], absolute[name]["recall_ms_p95"] = ms
    base = per_query[label(*CONFIGS[0])]
    vs_hybrid = {label(*c): compare(per_query[label(*c)], base, chains) for c in CONFIGS[1:]}
    alternative = compare(per_query[label(*ALTERNATIVE)], per_query[label(*DEFAULT)], chains)
    return {
        "corpus": hand.corpus,
        "seed": hand.seed or "default",
        "split": hand.split,
        "questions": len(queries),
        "chains_by_hops": {str(h): sum(1 for v in chains.values() if v == h) for h in sorted(set(chains.values()))},
        "absolute": absolute,
        "vs_hybrid": vs_hybrid,
        "alternative_vs_default": alternative,
    }


def compare(
    rows: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]], chains: dict[str, int]
) -> dict[str, dict[str, Any]]:
    """Paired differences (rows - base) in Hit@1, Hit@10, MRR@10 and, per hop count of the chains, completeness
    and the full-chain rate."""
    common = [q for q in base if q in rows]
    out = {k: paired([rows[q][k] for q in common], [base[q][k] for q in common]) for k in METRICS}
    for hops in sorted(set(chains.values())):
        ids = [q for q in common if chains.get(q) == hops]
        for key, field in ((f"completeness_{hops}", "multi_hop_completeness"), (f"full_chain_{hops}", "full_chain")):
            out[key] = paired([float(rows[q][field]) for q in ids], [float(base[q][field]) for q in ids])
    return out


def paired(run: list[float], base: list[float]) -> dict[str, Any]:
    out = paired_compare(np.array(run, dtype=float), np.array(base, dtype=float))
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in out.items()}


def recall_latency(sim: Simulator, retrievers: dict[str, Any], queries: list[Any]) -> dict[str, tuple[float, float]]:
    """Each configuration's ``Simulator.recall`` p50 and p95 in ms at top_k 10 over the first questions asked
    as a user at the current instant, the configurations taking turns on each question (one warm-up round)."""
    asked = [q for q in queries if q.user_id and q.as_of is None][: LATENCY_QUESTIONS + 1]
    times: dict[str, list[float]] = {name: [] for name in retrievers}
    for i, q in enumerate(asked):
        principal = sim.engine.user_principal(q.user_id)
        names = list(retrievers) if i % 2 else list(retrievers)[::-1]
        for name in names:
            sim.retriever = retrievers[name]
            started = time.perf_counter()
            sim.recall(principal, q.query, 10)
            if i:  # the first question warms every configuration up
                times[name].append(1000 * (time.perf_counter() - started))
    return {
        name: (round(float(np.percentile(t, 50)), 2), round(float(np.percentile(t, 95)), 2))
        for name, t in times.items()
    }


def show(name: str, data: dict[str, Any]) -> None:
    print(f"\n{name} ({data['split']}, {data['corpus']} seed {data['seed']}, {data['questions']} questions)")
    print(
        f"{'configuration':<21} {'Hit@1':>7} {'Hit@10':>7} {'MRR@10':>7} {'ms/q':>7} {'recall p50':>11} "
        f"{'p50 vs base':>12} {'Hit@1 vs base':>14}"
    )
    base = data["absolute"][label(*CONFIGS[0])]
    for cfg, m in data["absolute"].items():
        ratio = m["hit_rate@1"] / base["hit_rate@1"] if base["hit_rate@1"] else float("inf")
        slower = m["recall_ms_p50"] / base["recall_ms_p50"] if base["recall_ms_p50"] else float("inf")
        mark = " (default)" if cfg == label(*DEFAULT) else ""
        print(
            f"{cfg:<21} {m['hit_rate@1']:>7.3f} {m['hit_rate@10']:>7.3f} {m['mrr@10']:>7.3f} "
            f"{m['ms_per_query']:>7.1f} {m['recall_ms_p50']:>8.1f} ms {slower:>11.2f}x {ratio:>13.2f}x{mark}"
        )
    for cfg, cmp in data["vs_hybrid"].items():
        print(f"  {cfg} - {label(*CONFIGS[0])}: " + "; ".join(paired_cells(cmp)))
    alt = label(*ALTERNATIVE)
    print(f"  {alt} - {label(*DEFAULT)}: " + "; ".join(paired_cells(data["alternative_vs_default"])))


def main() -> None:
    wanted = [s for s in os.environ.get("BENCH_SETS", "").split(",") if s]
    sets = [s for s in SETS if not wanted or s.name in wanted]
    result: dict[str, Any] = {
        "embedder": EMBEDDER,
        "baseline": label(*CONFIGS[0]),
        "default": label(*DEFAULT),
        "configurations": [label(*c) for c in CONFIGS],
        "target_on_heldout": TARGET,
        "sets": {},
    }
    for hand in sets:
        data = measure(hand)
        result["sets"][hand.name] = data
        show(hand.name, data)
    checks: dict[str, bool] = {}
    for name, data in result["sets"].items():
        failed = sum(m["failed"] for m in data["absolute"].values())
        checks[f"{name}: no query failed ({failed})"] = failed == 0
        cfg = result["default"]
        cmp = data["vs_hybrid"][cfg]
        below = [k for k, row in cmp.items() if row["ci"] and row["ci"][1] < 0]
        checks[f"{name}: the default loses no metric to hybrid (CI below 0: {below or 'none'})"] = not below
        if data["split"] != "heldout":
            continue
        m = data["absolute"][cfg]
        for metric, floor in TARGET.items():
            checks[f"{name}: the default ({cfg})'s {metric} >= {floor} ({m[metric]:.3f})"] = m[metric] >= floor
    report_checks("bench_handwritten", result, checks)


if __name__ == "__main__":
    main()
