"""Where exact filtered search stops meeting the latency target, and what the IVF ANN costs in recall.

Synthetic clustered, L2-normalised vectors (384 dims, like the embedders), at several store sizes.
For each size and permission share (100%, 10%, 1% of chunks allowed): p50/p95 latency of exact
flat search inside the permission bitmap (the baseline) and of ``ChunkStore`` in ``ivf`` mode
(IVF + ID selector, widened until filled), the IVF's recall@10 against exact search, and how often
it returned fewer than ``min(10, allowed)`` hits (must be 0). Prints the ratio IVF/flat side by side;
writes ``benchmarks/results/bench_ann.json`` and ``.md``. The switch point ``ann.ANN_MIN_CHUNKS`` is the size
where flat p50 at 100% allowed passes ``TARGET_MS``. BENCH_QUICK=1 runs smaller sizes.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import faiss
import numpy as np

from drivebench.search.index.ann import ANN_MIN_CHUNKS
from drivebench.search.index.chunk_store import ChunkStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

QUICK = os.environ.get("BENCH_QUICK") == "1"
SIZES = [20_000, 50_000] if QUICK else [10_000, 20_000, 50_000, 100_000, 250_000]
SHARES = [1.0, 0.1, 0.01]
QUERIES = 50 if QUICK else 100
DIM = 384
TARGET_MS = 5.0  # exact search's share of the recall budget (the query embedding itself is ~12 ms)


def clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(10, n // 200), DIM)).astype(np.float32)
    x = centres[rng.integers(0, len(centres), n)] + 0.35 * rng.normal(size=(n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def build(vectors: np.ndarray, mode: str) -> ChunkStore:
    store = ChunkStore(DIM, index_mode=mode)
    step = 10_000
    for start in range(0, len(vectors), step):
        part = vectors[start : start + step]
        store.add(f"d{start}", f"v{start}", [("", "body")] * len(part), part)
    return store


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    faiss.omp_set_num_threads(1)  # the server searches one query per request thread
    rows = []
    for n in SIZES:
        vectors = clustered(n, seed=n)
        flat, ivf = build(vectors, "flat"), build(vectors, "ivf")
        started = time.perf_counter()
        ivf.search(vectors[0], np.ones(n, dtype=bool), 10)  # builds (trains) the IVF
        build_s = time.perf_counter() - started
        queries = clustered(QUERIES, seed=n + 1)
        rng = np.random.default_rng(0)
        for share in SHARES:
            mask = rng.random(n) < share
            t_flat, t_ivf, recall, short = [], [], [], 0
            for q in queries:
                t0 = time.perf_counter()
                exact = flat.search(q, mask, 10)
                t1 = time.perf_counter()
                approx = ivf.search(q, mask, 10)
                t2 = time.perf_counter()
                t_flat.append(1000 * (t1 - t0))
                t_ivf.append(1000 * (t2 - t1))
                want = min(10, int(mask.sum()))
                short += len(approx) < want
                recall.append(len({h.chunk_id for h in exact} & {h.chunk_id for h in approx}) / max(1, want))
            row = {
                "chunks": n,
                "allowed_share": share,
                "flat_p50_ms": pct(t_flat, 50),
                "flat_p95_ms": pct(t_flat, 95),
                "ivf_p50_ms": pct(t_ivf, 50),
                "ivf_p95_ms": pct(t_ivf, 95),
                "ivf_over_flat_p50": pct(t_ivf, 50) / pct(t_flat, 50),
                "ivf_recall@10": float(np.mean(recall)),
                "ivf_underfilled": short,
                "ivf_nlist": ivf.ann.nlist if ivf.ann else 0,
                "ivf_build_s": build_s,
            }
            rows.append(row)
            print(
                f"{n:>8} chunks {share:>5.0%} allowed: flat p50 {row['flat_p50_ms']:6.2f} ms | ivf p50 "
                f"{row['ivf_p50_ms']:6.2f} ms ({row['ivf_over_flat_p50']:.2f}x) recall@10 {row['ivf_recall@10']:.3f} "
                f"underfilled {short} (nlist {row['ivf_nlist']}, built in {build_s:.1f} s)",
                flush=True,
            )
        del flat, ivf
    over = [r["chunks"] for r in rows if r["allowed_share"] == 1.0 and r["flat_p50_ms"] > TARGET_MS]
    switch = min(over) if over else None
    print(f"\nflat p50 at 100% allowed first exceeds {TARGET_MS} ms at: {switch or 'none of the measured sizes'}")
    print(f"configured switch point ann.ANN_MIN_CHUNKS = {ANN_MIN_CHUNKS}")
    write_report("bench_ann", {"quick": QUICK, "target_ms": TARGET_MS, "rows": rows, "first_over": switch})
    bad = [r for r in rows if r["ivf_underfilled"]]
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
