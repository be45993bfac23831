"""Filtered top-10 dense search: a Milvus 2.3.5 server vs milvus-lite vs FAISS, side by side in one run.

The server is ``BENCH_MILVUS_URI`` or one this run starts (``drivebench.server.milvus_server``; in a network
namespace of its own when root); it gets the same vectors as milvus-lite and is searched at the consistency
level drivebench uses (``milvus_store.CONSISTENCY``). ``consistency`` compares Strong, Session and Bounded with a
write (trash, new version) or a revocation right before each search. ``BENCH_MILVUS_SIZES=12000``: other sizes.

Synthetic L2-normalised 384-d vectors, one chunk per document, in a real ``ChunkStore`` (FAISS
``IndexIDMap2(IndexFlatIP)``, index mode ``flat``: exact) with ``milvus_store.MilvusVectors`` attached (a
milvus-lite file in a temporary directory; FLAT index, inner product), at 12k and 100k chunks (1M with
``BENCH_MILVUS_1M=1``: loading alone takes minutes in milvus-lite). For each selectivity (1%, 10%, 50% of the
documents allowed, the same random set for both engines), top-10, one query per call:

* ``faiss_unfiltered`` / ``faiss_filtered``: ``index.search`` / ``ChunkStore.search`` with the permission bitmap;
* ``milvus_unfiltered`` / ``milvus_filtered``: no filter / the simulator's expression
  ``doc_no in [...] and valid_from <= t and valid_to > t and trashed_at > t`` (what recall sends);
* ``milvus_id_list``: the fallback expression ``id in [...]`` (chunk ids), for comparison.

Exactness = |returned ∩ brute-force top-10 of the allowed set| / min(10, allowed) (numpy brute force); the
under-fill rate counts queries with fewer than min(10, allowed) results. Ratios: each engine's filtered search
against its *own* unfiltered search (the target: milvus-lite filter cost <= 1.5x), and milvus-lite
against FAISS (printed, not targeted).

Propagation at the largest size (documents = chunks): a grant change rewrites nothing in Milvus, so it takes
effect with the next query: time from the changed allowed set to the first search that returns the newly
granted document; a trash (one document: ``trashed_at`` of its rows rewritten) and a folder-sized trash (1%
of the documents) until the search reflects it.

FAISS times are the best of 3 runs per query; Milvus times one run (each is ~100x longer). The machine is
shared (2 cores, other jobs): numbers are upper bounds. Writes ``benchmarks/results/bench_milvus.json`` and ``.md``.
``BENCH_QUICK=1``: fewer queries. Run: ``.venv/bin/python benchmarks/bench_milvus.py``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from drivebench.search.index.chunk_store import ChunkStore, visible_mask
from drivebench.search.index.milvus_store import CONSISTENCY, MAX_US, MilvusVectors
from drivebench.search.index.vector_store import IndexSpec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

DIM = 384
K = 10
SELECTIVITIES = (0.01, 0.1, 0.5)
METHODS = (
    "faiss_unfiltered",
    "faiss_filtered",
    "milvus_unfiltered",
    "milvus_filtered",
    "milvus_id_list",
    "server_unfiltered",
    "server_filtered",
)
LEVELS = ("Strong", "Session", "Bounded")
NOW_US = 1_790_000_000_000_000  # the instant every query is judged at (all chunks valid then)
FILTER_TARGET = 1.5


def _normalised(rng: np.random.Generator, n: int) -> np.ndarray:
    x = rng.standard_normal((n, DIM), dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x)


def build(
    n: int, rng: np.random.Generator, root: Path, spec: IndexSpec | None = None, xb: np.ndarray | None = None
) -> tuple[ChunkStore, MilvusVectors, np.ndarray, float]:
    """A chunk store of ``n`` one-chunk documents (filled directly: ``add`` per document is for real ingest)
    and its Milvus collection (milvus-lite, or the server of ``spec``); returns the load time of the collection."""
    xb = _normalised(rng, n) if xb is None else xb
    store = ChunkStore(DIM, index_mode="flat")
    store.index.add_with_ids(xb, np.arange(n, dtype=np.int64))
    store.texts = [""] * n
    store.parts = [""] * n
    store.doc_ids = [f"doc{i}" for i in range(n)]
    store.version_ids = [f"doc{i}-v1" for i in range(n)]
    store.ordinals = [0] * n
    store.alive = np.ones(n, dtype=bool)
    store.by_version = {f"doc{i}-v1": [i] for i in range(n)}
    milvus = MilvusVectors.open(store, spec or IndexSpec("milvus"), root / f"n{n}", reconcile=False)
    store.vector_backend = milvus
    started = time.perf_counter()
    milvus.sync(np.zeros(n, np.int64), np.full(n, MAX_US, np.int64), np.full(n, MAX_US, np.int64))
    return store, milvus, xb, time.perf_counter() - started


def _search(
    store: ChunkStore, engines: dict[str, MilvusVectors], method: str, q: np.ndarray, mask: np.ndarray
) -> list[int]:
    if method.startswith("server_"):
        server = engines["server"]
        if method == "server_unfiltered":
            return [h.chunk_id for h in server.unfiltered_search(q, K)]
        return [h.chunk_id for h in server.search(q, visible_mask(mask, NOW_US, server.generation), K)]
    milvus = engines["lite"]
    if method == "faiss_unfiltered":
        return [int(i) for i in store.index.search(q.reshape(1, -1), K)[1][0] if i >= 0]
    if method == "faiss_filtered":
        return [h.chunk_id for h in store.search(q, mask, K)]
    if method == "milvus_unfiltered":
        return [h.chunk_id for h in milvus.unfiltered_search(q, K)]
    if method == "milvus_filtered":
        return [h.chunk_id for h in milvus.search(q, visible_mask(mask, NOW_US, milvus.generation), K)]
    return [h.chunk_id for h in milvus.search(q, mask, K)]  # a plain mask: the id-list expression


def bench_size(
    n: int, quick: bool, root: Path, server_uri: str, seed: int = 0
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rng = np.random.default_rng(seed + n)
    store, milvus, xb, load_s = build(n, rng, root)
    _, server, _, server_load_s = build(n, rng, root / "server", IndexSpec("milvus", server_uri), xb)
    engines = {"lite": milvus, "server": server}
    n_queries = (8 if quick else 20) if n >= 100_000 else (15 if quick else 40)
    xq = _normalised(rng, n_queries)
    scores = xb @ xq.T
    rows: list[dict[str, Any]] = []
    for sel in SELECTIVITIES:
        n_allowed = max(1, round(sel * n))
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, n_allowed, replace=False)] = True
        allowed_ids = np.flatnonzero(mask)
        want = min(K, n_allowed)
        times: dict[str, list[float]] = {m: [] for m in METHODS}
        exact: dict[str, list[float]] = {m: [] for m in METHODS}
        under: dict[str, int] = dict.fromkeys(METHODS, 0)
        for j in range(n_queries):
            q = xq[j]
            truth = set(allowed_ids[np.argsort(-scores[allowed_ids, j], kind="stable")[:want]].tolist())
            order = METHODS[j % len(METHODS) :] + METHODS[: j % len(METHODS)]
            for method in order:
                best = float("inf")
                for _ in range(3 if method.startswith("faiss") else 1):
                    t0 = time.perf_counter()
                    got = _search(store, engines, method, q, mask)
                    best = min(best, time.perf_counter() - t0)
                times[method].append(best)
                if "unfiltered" not in method:
                    assert all(mask[i] for i in got), f"{method} returned a forbidden chunk"
                exact[method].append(len(truth & set(got)) / want)
                under[method] += len(got) < want
        med = {m: statistics.median(times[m]) for m in METHODS}
        for method in METHODS:
            own = method.split("_")[0] + "_unfiltered"
            rows.append(
                {
                    "chunks": n,
                    "selectivity": sel,
                    "allowed": n_allowed,
                    "method": method,
                    "queries": n_queries,
                    "median_ms": round(med[method] * 1000, 3),
                    "p90_ms": round(float(np.percentile(times[method], 90)) * 1000, 3),
                    "ratio_to_own_unfiltered": round(med[method] / med[own], 3),
                    "ratio_to_faiss_same_mode": round(
                        med[method] / med["faiss_filtered" if "unfiltered" not in method else "faiss_unfiltered"], 2
                    ),
                    "exactness": round(statistics.fmean(exact[method]), 4),
                    "underfill_rate": round(under[method] / n_queries, 4),
                }
            )
    extra: dict[str, Any] = {"chunks": n, "milvus_load_s": round(load_s, 2), "server_load_s": round(server_load_s, 2)}
    if n >= 100_000 or n == max(sizes()):
        extra["milvus_lite"] = propagation(store, milvus, xb, rng)
        extra["server"] = propagation(store, server, xb, rng)
    if n == min(sizes()):
        extra["consistency"] = consistency(n, rng, root, server_uri, quick)
    milvus.drop()
    server.drop()
    return rows, extra


def consistency(n: int, rng: np.random.Generator, root: Path, uri: str, quick: bool) -> list[dict[str, Any]]:
    """Strong vs Session vs Bounded on the server, with a write right before each search: a trash (the top
    document's ``trashed_at``), a new version (the old row's ``valid_to`` closed, a new row of the same document
    opened: both upserts) and a revocation (the allowed set loses the document; nothing is written). A search is
    stale when its answer still shows what the write removed (or raises: rows outside the permitted set)."""
    rounds = 6 if quick else 15
    out = []
    for level in LEVELS:
        _store, vec, xb, _ = build(n, rng, root / f"level-{level}", IndexSpec("milvus", uri))
        vec.consistency = level
        start, end, trash = np.zeros(n, np.int64), np.full(n, MAX_US, np.int64), np.full(n, MAX_US, np.int64)
        mask = np.ones(n, dtype=bool)
        hidden = np.zeros(n, dtype=bool)  # trashed or superseded by an earlier round
        times: dict[str, list[float]] = {"trash": [], "new_version": [], "revocation": [], "no_write": []}
        stale: dict[str, int] = dict.fromkeys(times, 0)
        for r in range(rounds):
            for change in times:
                q = xb[int(rng.integers(n))] + 0.01 * rng.standard_normal(DIM).astype(np.float32)
                scores = xb @ q
                scores[~mask | hidden] = -np.inf
                top = int(np.argmax(scores))
                hidden[top] = change in ("trash", "new_version")
                if change == "trash":
                    trash[top] = NOW_US - 1 - r
                elif (
                    change == "new_version"
                ):  # the old version's row closes (the new one's is an insert, the same upsert)
                    end[top] = NOW_US - 1 - r
                elif change == "revocation":
                    mask[top] = False
                # the document stays permitted: only the rows' validity (written to Milvus) hides the old row
                gen = vec.sync(start, end, trash)
                t0 = time.perf_counter()
                try:
                    hits = [h.chunk_id for h in vec.search(q, visible_mask(mask, NOW_US, gen), K)]
                    bad = change != "no_write" and top in hits
                except Exception:
                    bad = True
                times[change].append(time.perf_counter() - t0)
                stale[change] += bad
        for change, ts in times.items():
            out.append(
                {
                    "level": level,
                    "write_before_search": change,
                    "searches": len(ts),
                    "median_ms": round(statistics.median(ts) * 1000, 2),
                    "p90_ms": round(float(np.percentile(ts, 90)) * 1000, 2),
                    "stale": stale[change],
                }
            )
        vec.drop()
    return out


def start_server() -> tuple[str, Any]:
    """``BENCH_MILVUS_URI``, else a server of this run (drivebench.server.milvus_server; in a network namespace
    of its own when root)."""
    uri = os.environ.get("BENCH_MILVUS_URI", "").strip()
    if uri:
        return uri, None
    from drivebench.server.milvus_server import can_use_netns, free_base, start_binary, start_in_netns

    server = start_in_netns(None, 0) if can_use_netns() else start_binary(None, free_base())
    return server.uri, server


def propagation(store: ChunkStore, milvus: MilvusVectors, xb: np.ndarray, rng: np.random.Generator) -> dict[str, Any]:
    """How long a permission change takes to show in Milvus search results (documents = chunks here)."""
    n = len(store)
    q = xb[int(rng.integers(n))] + 0.01 * rng.standard_normal(DIM).astype(np.float32)
    top = int(np.argmax(xb @ q))  # the document this query finds first
    mask = np.zeros(n, dtype=bool)
    mask[rng.choice(n, n // 10, replace=False)] = True
    mask[top] = False
    assert top not in [h.chunk_id for h in milvus.search(q, visible_mask(mask, NOW_US, milvus.generation), K)]
    # grant: the allowed set gains the document; Milvus rows are untouched, the next query carries it
    t0 = time.perf_counter()
    granted = mask.copy()
    granted[top] = True
    hits = milvus.search(q, visible_mask(granted, NOW_US, milvus.generation), K)
    grant_s = time.perf_counter() - t0
    assert hits and hits[0].chunk_id == top
    # revoke it again: the allowed set loses the document, nothing is written; the next search omits it
    t0 = time.perf_counter()
    hits = milvus.search(q, visible_mask(mask, NOW_US, milvus.generation), K)
    revoke_s = time.perf_counter() - t0
    assert top not in [h.chunk_id for h in hits]
    # trash that document: its rows' trashed_at is rewritten (upsert), then the search no longer shows it
    start, end, trash = np.zeros(n, np.int64), np.full(n, MAX_US, np.int64), np.full(n, MAX_US, np.int64)
    t0 = time.perf_counter()
    trash[top] = NOW_US - 1
    gen = milvus.sync(start, end, trash)
    hits = milvus.search(q, visible_mask(granted, NOW_US, gen), K)
    trash_s = time.perf_counter() - t0
    assert top not in [h.chunk_id for h in hits]
    # a folder's worth: 1% of the documents trashed at once
    folder = rng.choice(n, n // 100, replace=False)
    t0 = time.perf_counter()
    trash[folder] = NOW_US - 1
    gen = milvus.sync(start, end, trash)
    hits = milvus.search(q, visible_mask(granted, NOW_US, gen), K)
    folder_s = time.perf_counter() - t0
    assert not set(folder.tolist()) & {h.chunk_id for h in hits}
    return {
        "propagation_documents": n,
        "grant_change_s": round(grant_s, 4),
        "grant_change_rows_rewritten": 0,
        "revocation_to_next_search_s": round(revoke_s, 4),
        "trash_one_document_s": round(trash_s, 4),
        "trash_one_document_rows_rewritten": 1,
        "trash_folder_s": round(folder_s, 3),
        "trash_folder_rows_rewritten": len(folder),
    }


def simulator_propagation(server_uri: str) -> list[dict[str, Any]]:
    """Grant and revoke through the whole simulator (seed corpus, dense pipeline, hash embedder), per backend:
    from the drive write to the first recall that shows (or no longer shows) the document. This includes the
    Casbin engine recompiling for the new policy version, which dominates; Milvus rewrites nothing."""
    from datetime import timedelta

    from drivebench.api import load_simulator
    from drivebench.drive.model import GrantRec
    from drivebench.simulator.backend import SimConfig

    out = []
    for backend in ("faiss", "milvus", f"milvus:{server_uri}"):
        sim = load_simulator("seed", config=SimConfig(embedder="hash", pipeline="dense", vector_store=backend))
        user, doc = "u012", "d0010"
        query = "Platform Architecture Overview"

        def shown(sim: Any = sim, user: str = user, doc: str = doc, query: str = query) -> bool:
            hits = sim.recall(sim.engine.user_principal(user), query, 50).hits
            return doc in {h.doc_id for h in hits}

        sim.drive.set_clearance(user, 1)  # public clearance: lift to internal, as tests/drive/test_asof_recall.py
        assert not shown()
        sim.drive.clock.advance(timedelta(minutes=1))
        t0 = time.perf_counter()
        sim.drive.add_grant(GrantRec("g-bench", f"user:{user}", ["preview"], "allow", doc_id=doc))
        granted = shown()
        grant_s = time.perf_counter() - t0
        sim.drive.clock.advance(timedelta(minutes=1))
        t0 = time.perf_counter()
        sim.drive.remove_grant("g-bench")
        revoked = not shown()
        revoke_s = time.perf_counter() - t0
        assert granted and revoked, (backend, granted, revoked)
        out.append(
            {
                "backend": IndexSpec("milvus", server_uri).label if ":" in backend else backend,
                "grant_to_recall_s": round(grant_s, 4),
                "revoke_to_recall_s": round(revoke_s, 4),
            }
        )
        if sim.store.vector_backend is not None:
            sim.store.vector_backend.drop()
    return out


def sizes() -> tuple[int, ...]:
    if os.environ.get("BENCH_MILVUS_SIZES"):  # e.g. 12000: a shorter run
        return tuple(int(x) for x in os.environ["BENCH_MILVUS_SIZES"].split(","))
    return (12_000, 100_000, 1_000_000) if os.environ.get("BENCH_MILVUS_1M") == "1" else (12_000, 100_000)


def main() -> int:
    quick = os.environ.get("BENCH_QUICK") == "1"
    faiss.omp_set_num_threads(1)
    print(f"filtered top-{K}, {DIM}-d, one query per call, median ms (FAISS flat best of 3; Milvus one run)")
    server_uri, server = start_server()
    print(f"Milvus server (2.3.5) at {server_uri}; consistency {CONSISTENCY}")
    try:
        return run(quick, server_uri)
    finally:
        if server is not None:
            server.stop()


def run(quick: bool, server_uri: str) -> int:
    import pymilvus

    rows: list[dict[str, Any]] = []
    extras: list[dict[str, Any]] = []
    print(f"{'chunks':>8} {'select':>7} {'method':>18} {'ms':>9} {'vs own unfilt':>13} {'vs faiss':>9} {'exact':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-milvus-") as tmp:
        for n in sizes():
            size_rows, extra = bench_size(n, quick, Path(tmp), server_uri)
            extras.append(extra)
            for r in size_rows:
                rows.append(r)
                print(
                    f"{r['chunks']:>8} {r['selectivity'] * 100:>6.0f}% {r['method']:>18} {r['median_ms']:>9.2f} "
                    f"{r['ratio_to_own_unfiltered']:>12.2f}x {r['ratio_to_faiss_same_mode']:>8.1f}x "
                    f"{r['exactness']:>6.3f}"
                )
            print(f"  {n} chunks: {json.dumps(extra)}")
    in_sim = simulator_propagation(server_uri)
    print(f"  grant/revoke through the simulator (seed): {json.dumps(in_sim)}")
    for extra in extras:
        for c in extra.get("consistency", []):
            print(
                f"  consistency {c['level']:>8} after {c['write_before_search']:>12}: {c['median_ms']:>8.2f} ms median, stale {c['stale']}/{c['searches']}"
            )
    filtered = [
        r for r in rows if r["method"] in ("faiss_filtered", "milvus_filtered", "milvus_id_list", "server_filtered")
    ]
    exact = all(r["exactness"] == 1.0 and r["underfill_rate"] == 0.0 for r in filtered)
    milvus_ratios = [r["ratio_to_own_unfiltered"] for r in rows if r["method"] == "milvus_filtered"]
    within = max(milvus_ratios) <= FILTER_TARGET
    result = {
        "quick": quick,
        "k": K,
        "dim": DIM,
        "rows": rows,
        "sizes": extras,
        "simulator_grant_propagation": in_sim,
        "filtered_exact_and_full_everywhere": exact,
        "milvus_filter_cost_max_ratio": max(milvus_ratios),
        "milvus_filter_cost_within_target": within,
        "server_version": "2.3.5",
        "consistency": CONSISTENCY,
        "filter_cost_target": FILTER_TARGET,
        "python": sys.version.split()[0],
        "faiss": faiss.__version__,
        "pymilvus": pymilvus.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
    }
    write_report("bench_milvus", result)
    print(f"exact with no under-fill everywhere: {exact}; milvus-lite filter cost max {max(milvus_ratios):.2f}x")
    print(f"  (target <= {FILTER_TARGET}x its own unfiltered search: {within})")
    return 0 if exact and within else 1


if __name__ == "__main__":
    raise SystemExit(main())
