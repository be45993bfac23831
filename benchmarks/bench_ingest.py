"""Ingestion speed against the model's own speed, and the latency of one incremental version update.

* **Ingestion**: ``Simulator.ingest_all()`` on a corpus (extract every version, chunk, embed with the
  real model, ``BENCH_EMBEDDER`` = the default ``e5`` or ``minilm``, add to FAISS and BM25), with the
  embedding and extraction caches disabled, in chunks per second; against the embedder's raw
  ``encode_passages`` of exactly the same chunk texts (one call), also in chunks per second. ``ratio = ingest / raw`` (target >= 0.8: the
  pipeline around the model costs at most a quarter of the model's time). Each repetition runs the
  two back to back (alternating order); the median per-repetition ratio is reported, with CPU time.
* **Incremental update**: one new version of one document (``drive.add_version``) and the index
  catching up (``sim.sync_index()``: re-extract and re-embed only that version), then the first recall
  after it; in memory and with a data directory (SQLite commit with fsync, blob fsync). Median and p95.

``BENCH_QUICK=1``: the small ``seed`` corpus, one repetition, 5 updates. Default: ``acme-zh``, best of
3 (after one warm-up ingestion), 20 updates. Prints the numbers and writes ``benchmarks/results/bench_ingest.json`` and ``.md``.
Run: ``.venv/bin/python benchmarks/bench_ingest.py``.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.search.index.embedders import DEFAULT_EMBEDDER, Embedder, get_embedder
from drivebench.search.ingest import prepare
from drivebench.simulator.backend import SimConfig, Simulator
from drivebench.simulator.persistence import open_durable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

QUICK = os.environ.get("BENCH_QUICK") == "1"
CORPUS = "seed" if QUICK else "acme-zh"
REPS = int(os.environ.get("BENCH_REPS", "1" if QUICK else "3"))
EMBEDDER = os.environ.get("BENCH_EMBEDDER", DEFAULT_EMBEDDER)
UPDATES = 5 if QUICK else 20


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ingest_once(corpus_dir: Path, embedder: Embedder, config: SimConfig) -> tuple[Simulator, float, float]:
    gc.collect()
    sim = Simulator(Drive.from_corpus(corpus_dir), config, embedder=embedder)
    wall, cpu = time.perf_counter(), time.process_time()
    sim.ingest_all()
    return sim, time.perf_counter() - wall, time.process_time() - cpu


def _raw_once(embedder: Embedder, texts: list[str]) -> tuple[float, float]:
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.encode_passages(texts)
    return time.perf_counter() - wall, time.process_time() - cpu


def measure_ingest(corpus_dir: Path, embedder: Embedder) -> dict[str, Any]:
    """Each repetition times ingestion and the raw encode back to back (alternating which goes first), so
    both see the same machine load; the ratio is the median of the per-repetition ratios (wall clock),
    with the CPU-time ratio alongside (less sensitive to other processes)."""
    config = SimConfig(embedder=EMBEDDER, use_cache=False)
    sim, _, _ = _ingest_once(corpus_dir, embedder, config)
    texts = list(sim.store.texts)
    runs = []
    for rep in range(REPS):
        if rep % 2 == 0:
            sim, ingest_s, ingest_cpu = _ingest_once(corpus_dir, embedder, config)
            raw_s, raw_cpu = _raw_once(embedder, texts)
        else:
            raw_s, raw_cpu = _raw_once(embedder, texts)
            sim, ingest_s, ingest_cpu = _ingest_once(corpus_dir, embedder, config)
        runs.append(
            {
                "ingest_s": round(ingest_s, 3),
                "raw_encode_s": round(raw_s, 3),
                "ratio": round(raw_s / ingest_s, 3),
                "ingest_cpu_s": round(ingest_cpu, 3),
                "raw_encode_cpu_s": round(raw_cpu, 3),
                "cpu_ratio": round(raw_cpu / ingest_cpu, 3),
            }
        )
    # where the rest of the time goes: extraction + chunking alone, for the same versions
    items = [(d, v) for d in sim.drive.documents.values() for v in d.versions]
    started = time.perf_counter()
    for d, v in items:
        prepare(sim.drive, d, v, sim.config.extract, sim.config.chunking)
    extract_s = time.perf_counter() - started
    median = sorted(runs, key=lambda r: r["ratio"])[len(runs) // 2]
    return {
        "corpus": corpus_dir.name,
        "versions": len(items),
        "chunks": len(texts),
        "rejected": len(sim.ingest_report.rejected),
        "runs": runs,
        "ingest_chunks_per_s": round(len(texts) / median["ingest_s"], 1),
        "raw_encode_chunks_per_s": round(len(texts) / median["raw_encode_s"], 1),
        "ratio": median["ratio"],
        "cpu_ratio": statistics.median(r["cpu_ratio"] for r in runs),
        "target_ratio": 0.8,
        "extract_and_chunk_s": round(extract_s, 3),
    }


def measure_updates(sim: Simulator, label: str) -> dict[str, Any]:
    drive = sim.drive
    candidates = sorted(
        d.doc_id for d in drive.documents.values() if d.file_type in ("md", "txt") and d.trashed_at is None
    )
    principal = sim.engine.user_principal(sorted(drive.users)[0])
    write_ms, index_ms, query_ms = [], [], []
    for i in range(UPDATES):
        doc = drive.doc(candidates[i % len(candidates)])
        data = drive.blob(doc.head.blob) + f"\n\n更新 {label} {i}: incremental update {time.time_ns()}\n".encode()
        started = time.perf_counter()
        drive.add_version(doc.doc_id, data, author="bench")
        wrote = time.perf_counter()
        report = sim.sync_index()
        indexed = time.perf_counter()
        assert report is not None and report.versions == 1, report
        sim.recall(principal, "incremental update", 10)
        queried = time.perf_counter()
        write_ms.append((wrote - started) * 1000)
        index_ms.append((indexed - wrote) * 1000)
        query_ms.append((queried - indexed) * 1000)
    total = [w + x for w, x in zip(write_ms, index_ms, strict=True)]
    return {
        "updates": UPDATES,
        "write_ms_median": round(statistics.median(write_ms), 2),
        "reindex_ms_median": round(statistics.median(index_ms), 2),
        "update_total_ms_median": round(statistics.median(total), 2),
        "update_total_ms_p95": round(_pct(total, 0.95), 2),
        "first_recall_after_ms_median": round(statistics.median(query_ms), 2),
    }


def main() -> None:
    corpus_dir = resolve_corpus(CORPUS)
    embedder = get_embedder(EMBEDDER)
    embedder.encode_passages(["warm up 预热"] * 64)  # model load and first-batch overhead stay out of the numbers
    ingest = measure_ingest(corpus_dir, embedder)
    print(f"ingest: {json.dumps(ingest)}", flush=True)
    memory_sim = Simulator(Drive.from_corpus(corpus_dir), SimConfig(embedder=EMBEDDER, use_cache=False), embedder)
    memory_sim.ingest_all()
    in_memory = measure_updates(memory_sim, "memory")
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        durable_sim = open_durable(Path(tmp) / "data", str(corpus_dir), SimConfig(embedder=EMBEDDER), embedder=embedder)
        try:
            durable = measure_updates(durable_sim, "durable")
        finally:
            durable_sim.close()
    result = {
        "benchmark": "bench_ingest",
        "quick": QUICK,
        "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()},
        "embedder": f"{embedder.name} ({embedder.fingerprint}), caches disabled for ingestion",
        "ingest": ingest,
        "incremental_update": {"in_memory": in_memory, "data_dir": durable},
    }
    write_report("bench_ingest", result)
    print(f"corpus {ingest['corpus']}: {ingest['versions']} versions, {ingest['chunks']} chunks")
    print(
        f"ingestion {ingest['ingest_chunks_per_s']} chunks/s vs raw {EMBEDDER} encode {ingest['raw_encode_chunks_per_s']} "
        f"chunks/s: ratio {ingest['ratio']} (target >= 0.8; CPU-time ratio {ingest['cpu_ratio']}); "
        f"extraction+chunking alone {ingest['extract_and_chunk_s']} s"
    )
    for label, u in (("in memory", in_memory), ("with --data-dir", durable)):
        print(
            f"incremental version update ({label}): {u['update_total_ms_median']} ms median, "
            f"{u['update_total_ms_p95']} ms p95 (write {u['write_ms_median']} + re-index {u['reindex_ms_median']}); "
            f"first recall after: {u['first_recall_after_ms_median']} ms"
        )


if __name__ == "__main__":
    main()
