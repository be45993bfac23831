"""BM25 statistics over the caller's visible set: what it costs against statistics over every chunk, side by
side in one process, at the default corpus (acme-zh, 629 documents) and grown to 100,000 documents
(``BM25_VIS_SCALES=629,10000`` picks others; ``BENCH_QUICK=1``: 629 and 3,000).

Over every chunk, a user could read hidden documents' words off a probe document's score (idf falls with
each hidden occurrence); over the visible set N, avgdl and each term's df are counted among the allowed
chunks at query time: O(chunks) for the lengths' sum plus a mask lookup per posting of the query's terms.

Per scale, in a child process (the corpus grown as ``bench_growth`` grows it, ``hash`` embedder): for six
users x 30 eval queries x 3 rounds, in-process ``Simulator.recall`` with the BM25 pipeline, alternating
``visible`` (today's retriever) and ``global`` (the former statistics over every chunk, kept here only as the
baseline) so both see the same machine load; p50/p95 ms and their ratio. Target: ratio of p50s <= 1.5 at every
scale. Writes ``benchmarks/results/bench_bm25_visibility.json`` and ``.md``.
Run: ``flock /tmp/drivebench-heavy.lock .venv/bin/python -m benchmarks.bench_bm25_visibility``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.bench_growth import BODIES, CORPUS, _ms, grow, pct, write_bodies
from benchmarks.report import report_checks

QUICK = os.environ.get("BENCH_QUICK") == "1"
SCALES = (
    [int(s) for s in os.environ["BM25_VIS_SCALES"].split(",")]
    if os.environ.get("BM25_VIS_SCALES")
    else [629, 3000]
    if QUICK
    else [629, 100000]
)
TARGET = 1.5
USERS, QUERIES, ROUNDS = 6, 30, 3


def _cache() -> Path:
    return Path(os.environ.get("DRIVEBENCH_CACHE", ".cache")) / "bench-growth"


def child(scale: int) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np

    from drivebench.corpora.builtin import resolve_corpus
    from drivebench.drive.state import Drive
    from drivebench.formats.corpus import EVALSET_NAME
    from drivebench.formats.evalset import load_evalset
    from drivebench.search.index.chunk_store import fit_mask
    from drivebench.search.retrieval.pipelines import DocHit, Retriever, _best_per_doc
    from drivebench.server.process import limit_search_threads
    from drivebench.simulator.backend import SimConfig, Simulator

    class GlobalStatsRetriever(Retriever):
        """The baseline: BM25 statistics over every chunk (the side channel), masked afterwards."""

        def bm25(self, query: str, mask: np.ndarray, top_k: int) -> list[DocHit]:
            alive = self.store.alive
            n = len(alive)
            scores = self.store.lexical.scores(query, n)
            ids = np.flatnonzero(fit_mask(mask, n) & alive & (scores > 0))
            if ids.size == 0:
                return []
            order = ids[np.lexsort((ids, -scores[ids]))]
            return _best_per_doc(self.store, [(int(i), float(scores[i])) for i in order], top_k)

    limit_search_threads()
    corpus_dir = resolve_corpus(CORPUS)
    drive = Drive.from_corpus(corpus_dir)
    grow(drive, scale, json.loads((_cache() / BODIES).read_text()))
    sim = Simulator(drive, SimConfig(pipeline="bm25", embedder="hash", cache_dir=_cache()))
    sim.ingest_all()
    queries = [q.query for q in load_evalset(corpus_dir / EVALSET_NAME)][:QUERIES]
    users = sorted(sim.drive.users)[:: max(1, len(sim.drive.users) // USERS)][:USERS]
    principals = [sim.engine.user_principal(u) for u in users]
    retrievers = {
        "visible": Retriever(sim.store, sim.embedder, "bm25"),
        "global": GlobalStatsRetriever(sim.store, sim.embedder, "bm25"),
    }
    times: dict[str, list[float]] = {k: [] for k in retrievers}
    for p in principals:  # warm-up: engine, masks, arrays
        sim.recall(p, queries[0], 10)
    for _ in range(ROUNDS):
        for q in queries:
            for p in principals:
                for name, retriever in retrievers.items():
                    sim.retriever = retriever
                    times[name].append(_ms(lambda p=p, q=q: sim.recall(p, q, 10))[0])
    out: dict[str, Any] = {"documents": len(sim.drive.documents), "chunks": sim.store.n_alive}
    for name, values in times.items():
        out[f"recall_{name}_ms"] = {"p50": round(pct(values, 0.5), 3), "p95": round(pct(values, 0.95), 3)}
    out["ratio_p50"] = round(out["recall_visible_ms"]["p50"] / out["recall_global_ms"]["p50"], 3)
    out["ratio_p95"] = round(out["recall_visible_ms"]["p95"] / out["recall_global_ms"]["p95"], 3)
    out["samples"] = len(times["visible"])
    return out


def main() -> None:
    if not (_cache() / BODIES).exists():
        write_bodies(_cache())
    results: dict[int, dict[str, Any]] = {}
    for scale in SCALES:
        print(f"scale {scale} ...", flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_bm25_visibility", "--child", str(scale)],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr[-3000:])
            raise SystemExit(f"scale {scale} failed")
        results[scale] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(
        f"\n{'documents':>10} {'chunks':>9} {'visible p50':>12} {'global p50':>11} {'ratio':>6} {'visible p95':>12} {'global p95':>11}"
    )
    for r in results.values():
        print(
            f"{r['documents']:>10} {r['chunks']:>9} {r['recall_visible_ms']['p50']:>12} {r['recall_global_ms']['p50']:>11}"
            f" {r['ratio_p50']:>6} {r['recall_visible_ms']['p95']:>12} {r['recall_global_ms']['p95']:>11}"
        )
    checks = {
        f"bm25 recall p50 with visible-set statistics <= {TARGET}x global at {r['documents']} documents": r["ratio_p50"]
        <= TARGET
        for r in results.values()
    }
    result = {
        "corpus": CORPUS,
        "embedder": "hash",
        "pipeline": "bm25",
        "scales": {str(s): r for s, r in results.items()},
    }
    report_checks("bench_bm25_visibility", result, checks)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(child(int(sys.argv[2]))))
    else:
        main()
