"""Recall latency over HTTP: the default pipeline (hybrid + e5) against the BM25 pipeline and against the
query-embedding floor, on acme-zh behind a real uvicorn server.

One server, one simulator; between runs only the simulator's retriever changes (``hybrid``, ``bm25``,
``dense``), so the HTTP path, the permission mask and the machine are the same. Each query of the
eval set is sent one at a time (as its own principal) with a keep-alive client; the rounds alternate
pipelines so machine load hits them alike. The floor is the embedder's own ``encode_queries([q])``
time for the same queries, in-process: no recall can be faster than embedding its query.
Target: default p50 <= 1.5x the floor. Prints p50/p95 and the ratios; writes
``benchmarks/results/bench_recall_http.json``. BENCH_QUICK=1: seed corpus, fewer rounds.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import httpx

from drivebench.api import load_simulator
from drivebench.corpora.format import EVALSET_NAME
from drivebench.evaluator.schema import load_evalset
from drivebench.server import start_in_thread
from drivebench.simulator.backend import SimConfig
from drivebench.simulator.retrieval.pipelines import DEFAULT_PIPELINE, Retriever

OUT = Path(__file__).parent / "results" / "bench_recall_http.json"
QUICK = os.environ.get("BENCH_QUICK") == "1"
CORPUS = "seed" if QUICK else "acme-zh"
ROUNDS = 1 if QUICK else 3
MAX_QUERIES = 40 if QUICK else 120
TARGET = 1.5


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    sim = load_simulator(CORPUS, config=SimConfig())
    assert sim.corpus_dir is not None
    queries = [q for q in load_evalset(sim.corpus_dir / EVALSET_NAME) if q.user_id and q.as_of is None]
    queries = queries[:MAX_QUERIES]
    embedder = sim.embedder
    pipelines = [DEFAULT_PIPELINE, "bm25", "dense"]
    times: dict[str, list[float]] = {p: [] for p in [*pipelines, "floor"]}
    with start_in_thread(sim) as server:
        headers = {"Authorization": f"Bearer {sim.tokens.eval_token}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            for q in queries[:5]:  # warm-up: model, engine, masks, connections
                http.post("/api/mcp/recall", json={"query": q.query, "user_id": q.user_id, "top_k": 10})
            for rnd in range(ROUNDS):
                order = pipelines if rnd % 2 == 0 else pipelines[::-1]
                for pipeline in order:
                    sim.retriever = Retriever(sim.store, embedder, pipeline)
                    for q in queries:
                        t0 = time.perf_counter()
                        r = http.post("/api/mcp/recall", json={"query": q.query, "user_id": q.user_id, "top_k": 10})
                        times[pipeline].append(1000 * (time.perf_counter() - t0))
                        assert r.status_code == 200, r.text
                for q in queries:
                    t0 = time.perf_counter()
                    embedder.encode_queries([q.query])
                    times["floor"].append(1000 * (time.perf_counter() - t0))
    sim.retriever = Retriever(sim.store, embedder, DEFAULT_PIPELINE)
    floor = pct(times["floor"], 0.5)
    result = {
        "corpus": CORPUS,
        "embedder": embedder.name,
        "queries": len(queries),
        "rounds": ROUNDS,
        "p50_ms": {k: pct(v, 0.5) for k, v in times.items()},
        "p95_ms": {k: pct(v, 0.95) for k, v in times.items()},
        "mean_ms": {k: statistics.fmean(v) for k, v in times.items()},
        "default_over_floor_p50": pct(times[DEFAULT_PIPELINE], 0.5) / floor,
        "default_over_bm25_p50": pct(times[DEFAULT_PIPELINE], 0.5) / pct(times["bm25"], 0.5),
        "target_default_over_floor": TARGET,
    }
    print(f"{CORPUS}: {len(queries)} queries x {ROUNDS} rounds, embedder {embedder.name}")
    for k in times:
        print(
            f"  {k:<8} p50 {result['p50_ms'][k]:7.1f} ms  p95 {result['p95_ms'][k]:7.1f} ms  x floor {result['p50_ms'][k] / floor:5.2f}"
        )
    ok = result["default_over_floor_p50"] <= TARGET
    print(
        f"default ({DEFAULT_PIPELINE}) p50 = {result['default_over_floor_p50']:.2f}x the query-embedding floor "
        f"(target <= {TARGET}x: {'met' if ok else 'MISSED'}); {result['default_over_bm25_p50']:.2f}x bm25"
    )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
