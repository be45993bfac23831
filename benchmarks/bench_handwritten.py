"""The retrieval configurations on the hand-written eval sets: the held-out one and the two dev sets.

The generated eval sets follow the generator's question templates; a learned stage or a tuned knob can fit those
templates rather than the questions people ask. The hand-written sets (``benchmarks/data/heldout/``, never tuned
on, and ``benchmarks/data/dev/``, tuning sets) are the check: each is answered in-process at top_k 10, as each
question's asker, by the default pipeline (``hybrid``, e5), by ``deep``, and by both followed by the shipped
reranker (``--rerank ltr``). Per set and configuration: Hit@1, Hit@10, MRR@10 with their bootstrap 95% CIs, the
paired difference to the default with its CI and sign-flip p (``evaluator.stats.paired_compare``, what
``eval compare`` uses) and the ratio to the default side by side, and ms per question.

Target (the improvement loop's acceptance): on the held-out set, the shipped default reaches Hit@1 >= 0.80 and
Hit@10 >= 0.95. The exit code is 1 when it does not (``benchmarks/report.report_checks``).
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
from drivebench.formats.evalset import load_evalset
from drivebench.search.index.embedders import get_embedder
from drivebench.search.retrieval.pipelines import DEFAULT_PIPELINE
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.target import InProcessTarget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import paired_cells, report_checks

DATA = Path(__file__).resolve().parent / "data"
EMBEDDER = "e5"
METRICS = ("hit_rate@1", "hit_rate@10", "mrr@10")
# (pipeline, rerank): the default first, the baseline of every comparison
CONFIGS: list[tuple[str, str | None]] = [
    (DEFAULT_PIPELINE, None),
    ("deep", None),
    (DEFAULT_PIPELINE, "ltr"),
    ("deep", "ltr"),
]
TARGET = {"hit_rate@1": 0.80, "hit_rate@10": 0.95}
# the configuration the dev sets chose to replace the default (equal Hit@1 and MRR@10 to hybrid+ltr there,
# higher Hit@10); its check is on the held-out sets, next to the default's
CANDIDATE = ("deep", "ltr")


@dataclass(frozen=True)
class HandWrittenSet:
    name: str
    path: Path
    corpus: str
    seed: int | None  # None: the default seed
    split: str  # heldout: never tuned on; dev: may be tuned on


SETS = [
    HandWrittenSet(
        "heldout-acme-zh-v3", DATA / "heldout" / "acme-zh-v3-handwritten.jsonl", "acme-zh@3", None, "heldout"
    ),
    # first scored to check the candidate default chosen on the dev sets (deep + the reranker), then kept here
    HandWrittenSet(
        "heldout-acme-zh-v3-2", DATA / "heldout" / "acme-zh-v3-handwritten-2.jsonl", "acme-zh@3", None, "heldout"
    ),
    HandWrittenSet("dev-acme-en-v3", DATA / "dev" / "acme-en-v3-handwritten-dev.jsonl", "acme-en@3", None, "dev"),
    HandWrittenSet("dev-acme-zh-v3-s11", DATA / "dev" / "acme-zh-v3-s11-handwritten-dev.jsonl", "acme-zh@3", 11, "dev"),
]


def label(pipeline: str, rerank: str | None) -> str:
    return pipeline + (f"+{rerank}" if rerank else "")


def measure(hand: HandWrittenSet) -> dict[str, Any]:
    corpus_dir = resolve_corpus(hand.corpus, seed=hand.seed)
    queries = load_evalset(hand.path)
    oracle = corpus_oracle(corpus_dir)
    sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(embedder=EMBEDDER), embedder=get_embedder(EMBEDDER))
    sim.ingest_all()
    sim.corpus_dir = corpus_dir
    per_query: dict[str, dict[str, dict[str, float]]] = {}
    absolute: dict[str, dict[str, Any]] = {}
    for pipeline, rerank in CONFIGS:
        name = label(pipeline, rerank)
        sim.retriever = sim.make_retriever(pipeline, rerank)
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
        }
    base = per_query[label(*CONFIGS[0])]
    vs_default: dict[str, dict[str, Any]] = {}
    for pipeline, rerank in CONFIGS[1:]:
        name = label(pipeline, rerank)
        rows = per_query[name]
        common = [q for q in base if q in rows]
        vs_default[name] = {}
        for k in METRICS:
            out = paired_compare(np.array([rows[q][k] for q in common]), np.array([base[q][k] for q in common]))
            vs_default[name][k] = {a: (round(v, 4) if isinstance(v, float) else v) for a, v in out.items()}
    return {
        "corpus": hand.corpus,
        "seed": hand.seed or "default",
        "split": hand.split,
        "questions": len(queries),
        "absolute": absolute,
        "vs_default": vs_default,
    }


def show(name: str, data: dict[str, Any]) -> None:
    print(f"\n{name} ({data['split']}, {data['corpus']} seed {data['seed']}, {data['questions']} questions)")
    print(f"{'configuration':<14} {'Hit@1':>7} {'Hit@10':>7} {'MRR@10':>7} {'ms/q':>7} {'Hit@1 vs default':>17}")
    base = data["absolute"][label(*CONFIGS[0])]
    for cfg, m in data["absolute"].items():
        ratio = m["hit_rate@1"] / base["hit_rate@1"] if base["hit_rate@1"] else float("inf")
        print(
            f"{cfg:<14} {m['hit_rate@1']:>7.3f} {m['hit_rate@10']:>7.3f} {m['mrr@10']:>7.3f} "
            f"{m['ms_per_query']:>7.1f} {ratio:>16.2f}x"
        )
    for cfg, cmp in data["vs_default"].items():
        print(f"  {cfg} - {label(*CONFIGS[0])}: " + "; ".join(paired_cells(cmp)))


def main() -> None:
    wanted = [s for s in os.environ.get("BENCH_SETS", "").split(",") if s]
    sets = [s for s in SETS if not wanted or s.name in wanted]
    result: dict[str, Any] = {
        "embedder": EMBEDDER,
        "default": label(*CONFIGS[0]),
        "configurations": [label(*c) for c in CONFIGS],
        "target_on_heldout": TARGET,
        "candidate_default": label(*CANDIDATE),
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
        if data["split"] != "heldout":
            continue
        for who, cfg in (("the default", result["default"]), ("the candidate default", label(*CANDIDATE))):
            m = data["absolute"][cfg]
            for metric, floor in TARGET.items():
                checks[f"{name}: {who} ({cfg})'s {metric} >= {floor} ({m[metric]:.3f})"] = m[metric] >= floor
        cmp = data["vs_default"][label(*CANDIDATE)]
        below = [k for k, row in cmp.items() if row["ci"] and row["ci"][1] < 0]
        checks[f"{name}: the candidate loses no metric to the default (CI below 0: {below or 'none'})"] = not below
    report_checks("bench_handwritten", result, checks)


if __name__ == "__main__":
    main()
