"""Point-in-time recall: the cost of the "at T **and** now" intersection.

A principal acting as itself (a user token) with a past ``as_of`` gets what it could preview at T and
may still preview now (``drive/permissions/pointintime.py``): one more permission mask (cached per
principal and policy lines, like the first) and one more check per hit. Without the intersection is the
same recall with the same principal marked ``evaluated_as`` (what the evaluation token gets: T only),
so the two arms differ in exactly that work.

Set-up: the corpus (``acme-en``; ``BENCH_QUICK=1``: ``seed``) with the BM25 pipeline, then a history on
the simulated clock: a day later a third of the folder grants are revoked, some folders move under
another, new grants are added; ``as_of`` is a random instant before those changes. Every eval-set query
runs for a sample of users, both arms back to back in alternating order, after one warm-up pass.

Prints p50/p95 per arm, the ratio of p50s (target <= 1.1) and how many results the intersection removed;
writes ``benchmarks/results/bench_pointintime.json`` and ``.md``. Run: ``.venv/bin/python benchmarks/bench_pointintime.py``.
"""

from __future__ import annotations

import os
import platform
import random
import statistics
import sys
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.model import GrantRec
from drivebench.drive.permissions import pointintime
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.simulator.backend import SimConfig, Simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

QUICK = os.environ.get("BENCH_QUICK") == "1"
CORPUS = "seed" if QUICK else "acme-en"
USERS = 6 if QUICK else 12
QUERIES = 30 if QUICK else 80
TOP_K = 10
TARGET = 1.1


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def make_history(sim: Simulator, rng: random.Random) -> dict[str, int]:
    """Revoke a third of the folder grants, move some folders, add grants: a day after the corpus clock."""
    drive = sim.drive
    drive.clock.advance(timedelta(days=1))
    folder_grants = sorted(g for g, rec in drive.grants.items() if rec.folder_id is not None)
    revoked = rng.sample(folder_grants, max(1, len(folder_grants) // 3))
    for gid in revoked:
        drive.remove_grant(gid)
    folders = sorted(f for f, node in drive.folders.items() if node.parent_id is not None)
    moved = 0
    for fid in rng.sample(folders, min(5, len(folders))):
        target = rng.choice(sorted(drive.folders))
        try:
            drive.move_folder(fid, target)
            moved += 1
        except Exception:  # a cycle or a name clash: the drive refuses, nothing changes
            pass
    users = sorted(drive.users)
    added = 0
    for i in range(10):
        folder = rng.choice(sorted(drive.folders))
        drive.add_grant(GrantRec(f"bench-{i}", f"user:{rng.choice(users)}", ["preview"], "allow", folder_id=folder))
        added += 1
    drive.clock.advance(timedelta(hours=1))
    return {"revoked": len(revoked), "moved_folders": moved, "added": added}


def main() -> int:
    rng = random.Random(7)
    corpus_dir = resolve_corpus(CORPUS)
    sim = Simulator.from_corpus(corpus_dir, SimConfig(embedder="hash", pipeline="bm25", use_cache=False))
    start = sim.drive.clock.now()
    history = make_history(sim, rng)
    as_of = start - timedelta(hours=6)
    queries = [q.query for q in load_evalset(corpus_dir / EVALSET_NAME)]
    queries = rng.sample(queries, min(QUERIES, len(queries)))
    users = rng.sample(sorted(sim.drive.users), min(USERS, len(sim.drive.users)))
    principals = [sim.engine.user_principal(u) for u in users]

    def run(principal: Any, query: str) -> tuple[float, int]:
        t = time.perf_counter()
        out = sim.recall(principal, query, TOP_K, as_of=as_of)
        return time.perf_counter() - t, len(out.hits)

    for p in principals:  # warm-up: masks, engines, tokenizer
        for q in queries[:3]:
            run(p, q)
            run(replace(p, evaluated_as=True), q)
    with_pit: list[float] = []
    without: list[float] = []
    removed = 0
    for i, (p, q) in enumerate((p, q) for p in principals for q in queries):
        replay = replace(p, evaluated_as=True)
        if i % 2 == 0:
            a, n_a = run(p, q)
            b, n_b = run(replay, q)
        else:
            b, n_b = run(replay, q)
            a, n_a = run(p, q)
        with_pit.append(a)
        without.append(b)
        removed += max(0, n_b - n_a)
    now_times = []  # reference: the same recalls with as_of omitted (judged now)
    for p in principals[:3]:
        for q in queries[:20]:
            t = time.perf_counter()
            sim.recall(p, q, TOP_K)
            now_times.append(time.perf_counter() - t)
    # the permission step alone (no search): the intersected mask vs the mask at T
    now = sim.drive.clock.now()
    mask_with, mask_without = [], []
    for _ in range(20):
        for p in principals:
            t = time.perf_counter()
            pointintime.allowed_mask(sim, p, "preview", as_of, now)
            mask_with.append(time.perf_counter() - t)
            t = time.perf_counter()
            sim.engine_at(as_of).allowed_mask(p, "preview", as_of)
            mask_without.append(time.perf_counter() - t)
    p50_with, p50_without = statistics.median(with_pit), statistics.median(without)
    ratio = p50_with / p50_without
    result = {
        "benchmark": "bench_pointintime",
        "corpus": CORPUS,
        "documents": len(sim.drive.documents),
        "chunks": sim.store.n_alive,
        "pipeline": "bm25",
        "history": history,
        "users": len(principals),
        "queries": len(queries),
        "recalls_per_arm": len(with_pit),
        "top_k": TOP_K,
        "with_intersection_ms": {"p50": round(p50_with * 1e3, 3), "p95": round(_pct(with_pit, 0.95) * 1e3, 3)},
        "without_intersection_ms": {"p50": round(p50_without * 1e3, 3), "p95": round(_pct(without, 0.95) * 1e3, 3)},
        "as_of_omitted_ms": {"p50": round(statistics.median(now_times) * 1e3, 3)},
        "mask_only_us": {
            "with_p50": round(statistics.median(mask_with) * 1e6, 1),
            "without_p50": round(statistics.median(mask_without) * 1e6, 1),
        },
        "ratio_p50": round(ratio, 3),
        "target_ratio": TARGET,
        "met": ratio <= TARGET,
        "results_removed_by_intersection": removed,
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "quick": QUICK,
    }
    print(
        f"point-in-time recall on {CORPUS} ({result['documents']} docs, {result['chunks']} chunks, bm25, top {TOP_K})"
    )
    print(f"  history: {history}; as_of = clock - 6 h before the changes; {len(with_pit)} recalls per arm")
    print(
        f"  with the intersection (user token): p50 {result['with_intersection_ms']['p50']} ms, p95 {result['with_intersection_ms']['p95']} ms"
    )
    print(
        f"  without it (T only, evaluated-as):  p50 {result['without_intersection_ms']['p50']} ms, p95 {result['without_intersection_ms']['p95']} ms"
    )
    print(f"  as_of omitted (now):                p50 {result['as_of_omitted_ms']['p50']} ms")
    masks = result["mask_only_us"]
    print(f"  permission mask alone (cached): p50 {masks['with_p50']} us with, {masks['without_p50']} us without")
    print(f"  ratio of p50s: {ratio:.3f} (target <= {TARGET}) {'met' if result['met'] else 'NOT MET'}")
    print(f"  results the intersection removed: {removed}")
    write_report("bench_pointintime", result)
    return 0 if result["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
