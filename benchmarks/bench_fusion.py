"""Tune the hybrid pipeline's reciprocal-rank fusion with a held-out language.

The hybrid pipeline (BM25 + e5 dense over FAISS) fuses two document rankings by weighted RRF
(``retrieval.pipelines.fuse``: ``w_dense / (k + rank_dense) + w_bm25 / (k + rank_bm25)``, each ranking cut at
``depth``). This chooses ``k``, the weights and the depth on one corpus's eval set and reports the choice
on the other language's corpus, which took no part in the choice, against the current defaults, in both
directions (tune on acme-en@2, test on acme-zh@2; tune on acme-zh@2, test on acme-en@2).

Each corpus is indexed once with e5 (vectors from the embedding cache when present). Every query then runs
through the real in-process recall path (principal, permission mask, per-hit re-check) as its principal;
only the two rankings are memoised per (query, permission mask) at depth ``MAX_DEPTH``, and each setting
fuses their prefixes, which are exactly the shallower rankings (checked: the memoised default equals a
plain ``Retriever`` query by query). The selection criterion is MRR@10 on the tuning set (ties: Hit@10,
then Hit@1). On the held-out set the chosen setting and the default are compared query by query with the
evaluator's paired statistics (``scoring.compare``: mean difference, paired bootstrap 95% CI, sign-flip
p-value). Prints absolute numbers and chosen/default ratios side by side; writes
``benchmarks/results/bench_fusion.json`` and ``.md``. BENCH_EMBEDDER (default e5) selects the dense half's embedder,
BENCH_QUICK=1 a small grid on small corpora.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.evaluator.evaluate import Evaluation, evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.scoring import compare
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import DEFAULT_FUSION, DocHit, Fusion, Retriever, fuse
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

QUICK = os.environ.get("BENCH_QUICK") == "1"
EMBEDDER = os.environ.get("BENCH_EMBEDDER", "e5")
CORPORA = ("acme-en@2", "acme-zh@2")  # each is the held-out set of the other's tuning
TOP_K = 10
METRICS = ("hit_rate@1", "hit_rate@10", "mrr@10")
GRID_K = (1, 5, 10, 20, 40, 60, 100) if not QUICK else (5, 60)
GRID_W_BM25 = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0) if not QUICK else (1.0, 2.0)  # w_dense = 1: only the ratio counts
GRID_DEPTH = (50, 100) if not QUICK else (50,)  # the depth is at least 5 * top_k = 50
MAX_DEPTH = max(GRID_DEPTH)


class MemoisedHybrid(Retriever):
    """The hybrid pipeline with its two rankings memoised per (query, mask) at ``MAX_DEPTH``."""

    def __init__(self, base: Retriever, fusion: Fusion) -> None:
        super().__init__(base.store, base.embedder, "hybrid", fusion)
        self.rankings: dict[tuple[str, str, int], tuple[list[DocHit], list[DocHit]]] = {}

    def hybrid(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
        depth = self.fusion.depth_for(top_k)
        deepest = max(MAX_DEPTH, depth)
        key = (query, hashlib.blake2b(np.ascontiguousarray(mask).tobytes(), digest_size=16).hexdigest(), deepest)
        if key not in self.rankings:
            self.rankings[key] = (self.dense(query, mask, deepest), self.bm25(query, mask, deepest))
        dense, lexical = self.rankings[key]
        return fuse(dense[:depth], lexical[:depth], top_k, self.fusion)


def grid() -> list[Fusion]:
    out = [
        Fusion(k=k, w_dense=1.0, w_bm25=w, depth=d) for k, w, d in itertools.product(GRID_K, GRID_W_BM25, GRID_DEPTH)
    ]
    return out if DEFAULT_FUSION in out else [DEFAULT_FUSION, *out]


def label(f: Fusion) -> str:
    return f"k={f.k:g} w_dense={f.w_dense:g} w_bm25={f.w_bm25:g} depth={f.depth}"


class Bench:
    def __init__(self, corpus: str) -> None:
        self.corpus = corpus
        corpus_dir = resolve_corpus(corpus, scale="small" if QUICK else None)
        self.queries = load_evalset(corpus_dir / EVALSET_NAME)
        self.oracle = corpus_oracle(corpus_dir)
        self.sim = Simulator(
            Drive.from_corpus(corpus_dir), SimConfig(embedder=EMBEDDER), embedder=get_embedder(EMBEDDER)
        )
        started = time.perf_counter()
        self.sim.ingest_all()
        print(
            f"{corpus}: indexed {self.sim.store.n_alive} chunks with {EMBEDDER} in {time.perf_counter() - started:.1f} s"
        )
        self.plain = Retriever(self.sim.store, self.sim.embedder, "hybrid", DEFAULT_FUSION)
        self.memo = MemoisedHybrid(self.plain, DEFAULT_FUSION)

    def run(self, retriever: Retriever) -> Evaluation:
        self.sim.retriever = retriever
        ev = evaluate(
            InProcessTarget(self.sim),
            self.queries,
            run_config=RunConfig(top_k=TOP_K, concurrency=1),
            oracle=self.oracle,
        )
        assert ev.result["errors"]["failed"] == 0, ev.result["errors"]
        return ev

    def score(self, fusion: Fusion) -> dict[str, Any]:
        self.memo.fusion = fusion
        return self.run(self.memo).result


def means(result: dict[str, Any]) -> dict[str, float]:
    return {m: float(result["metrics"][m]) for m in METRICS}


def ranked_docs(ev: Evaluation) -> list[tuple[str, list[str]]]:
    return [(r.query_id, [h.doc_id for h in r.results]) for r in ev.records]


def main() -> None:
    benches = {c: Bench(c) for c in CORPORA}
    candidates = grid()
    report: dict[str, Any] = {
        "quick": QUICK,
        "embedder": EMBEDDER,
        "top_k": TOP_K,
        "default": asdict(DEFAULT_FUSION),
        "grid": {"k": GRID_K, "w_bm25 (w_dense=1)": GRID_W_BM25, "depth": GRID_DEPTH},
        "criterion": "max MRR@10 on the tuning set (ties: Hit@10, Hit@1)",
        "corpora": {},
        "directions": [],
    }
    scored: dict[str, dict[Fusion, dict[str, Any]]] = {}
    for corpus, bench in benches.items():
        started = time.perf_counter()
        plain = bench.run(bench.plain)
        plain_s = time.perf_counter() - started
        bench.memo.fusion = DEFAULT_FUSION
        same = ranked_docs(plain) == ranked_docs(bench.run(bench.memo))
        assert same, "the memoised rankings do not reproduce the plain hybrid pipeline"
        started = time.perf_counter()
        scored[corpus] = {}
        for i, f in enumerate(candidates, 1):
            scored[corpus][f] = bench.score(f)
            if i % 10 == 0:
                print(
                    f"  {corpus}: {i}/{len(candidates)} settings in {time.perf_counter() - started:.0f} s", flush=True
                )
        grid_s = time.perf_counter() - started
        print(
            f"{corpus}: {len(bench.queries)} queries; plain hybrid pass {plain_s:.1f} s; {len(candidates)} settings "
            f"in {grid_s:.1f} s; memoised default == plain hybrid per query: {same}"
        )
        report["corpora"][corpus] = {
            "queries": len(bench.queries),
            "chunks": bench.sim.store.n_alive,
            "grid": [{**asdict(f), **means(r)} for f, r in scored[corpus].items()],
        }
    for tune, test in ((CORPORA[0], CORPORA[1]), (CORPORA[1], CORPORA[0])):
        table = scored[tune]
        chosen = max(
            candidates,
            key=lambda f: (
                round(means(table[f])["mrr@10"], 9),
                round(means(table[f])["hit_rate@10"], 9),
                round(means(table[f])["hit_rate@1"], 9),
                f == DEFAULT_FUSION,
            ),
        )
        held_default, held_chosen = scored[test][DEFAULT_FUSION], scored[test][chosen]
        cmp = compare(held_chosen, held_default)["metrics"]
        direction = {
            "tuned_on": tune,
            "held_out": test,
            "chosen": asdict(chosen),
            "tuning_set": {"default": means(table[DEFAULT_FUSION]), "chosen": means(table[chosen])},
            "held_out_set": {"default": means(held_default), "chosen": means(held_chosen)},
            "held_out_paired": {m: {k: cmp[m][k] for k in ("n", "diff", "ci", "p_value")} for m in METRICS},
        }
        report["directions"].append(direction)
        print(f"\ntuned on {tune}: chosen {label(chosen)} (default {label(DEFAULT_FUSION)})")
        print(
            f"  {'set':<22} {'metric':<12} {'default':>8} {'chosen':>8} {'ratio':>7} {'diff':>8} {'95% CI':>18} {'p':>7}"
        )
        for where, key in ((f"{tune} (tuning)", "tuning_set"), (f"{test} (held out)", "held_out_set")):
            for m in METRICS:
                d, c = direction[key]["default"][m], direction[key]["chosen"][m]
                ratio = c / d if d else float("inf")
                extra = ""
                if key == "held_out_set":
                    row = cmp[m]
                    ci = row["ci"] or [float("nan"), float("nan")]
                    extra = f" {row['diff']:>+8.3f} [{ci[0]:>+7.3f}, {ci[1]:>+7.3f}] {row['p_value']:>7.4f}"
                print(f"  {where:<22} {m:<12} {d:>8.3f} {c:>8.3f} {ratio:>6.3f}x{extra}")
    # the rule for changing the default: better on the held-out language beyond noise, in both directions
    verdicts = []
    for d in report["directions"]:
        paired = d["held_out_paired"]
        better = paired["mrr@10"]["ci"] is not None and paired["mrr@10"]["ci"][0] > 0
        no_worse = all(paired[m]["ci"] is None or paired[m]["ci"][1] >= 0 for m in METRICS)
        verdicts.append(better and no_worse)
    report["rule"] = (
        "change the default only when, in both directions, the held-out MRR@10 difference's 95% CI lies above 0 "
        "and no metric's CI lies below 0"
    )
    report["change_default"] = all(verdicts)
    print(f"\n{report['rule']}: {'yes' if report['change_default'] else 'no'} (per direction: {verdicts})")
    write_report("bench_fusion", report)


if __name__ == "__main__":
    main()
    sys.exit(0)
