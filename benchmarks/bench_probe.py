"""Leak-probe throughput over HTTP: ``drivebench probe`` pairs/s against plain eval-run queries/s.

A real ``drivebench serve`` subprocess (acme-zh, default scale: 300 documents, 48 users; BM25 with the
documented hash embedder) on its own core; the client in this process. Side by side, interleaved,
best of 2, the same concurrency (8):

* baseline: the corpus's eval set (first N queries) through ``run_queries`` (what ``eval run`` sends);
* probe: N/2 pairs x 2 attack queries each through ``run_probe`` (the same requests plus judging
  every result against the ground truth and explaining every leak).

Reports requests/s of both and ``probe / baseline`` (target >= 0.7: judging must not dominate), plus
pairs/s of the send+judge phase and of the whole command (ground truth, sampling, query building
included). Writes ``benchmarks/results/bench_probe.json`` and ``.md``. ``BENCH_QUICK=1``: N = 200 (else 1,000).
Run: ``.venv/bin/python benchmarks/bench_probe.py``.
"""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from drivebench.corpora.builtin import resolve_corpus
from drivebench.drive.state import Drive
from drivebench.drive.tokens import EVAL_SERVICE, make_token
from drivebench.evaluator.probe.groundtruth import GroundTruth
from drivebench.evaluator.probe.pairs import sample_pairs
from drivebench.evaluator.probe.queries import QueryBuilder
from drivebench.evaluator.probe.run import ProbeConfig, run_probe
from drivebench.evaluator.runner import RunConfig, run_queries
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.corpus import EVALSET_NAME, load_manifest
from drivebench.formats.evalset import load_evalset
from drivebench.server.process import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: benchmarks.report
from benchmarks.report import write_report

QUICK = os.environ.get("BENCH_QUICK") == "1"
N = 200 if QUICK else 1000
CONCURRENCY = 8
TARGET_RATIO = 0.7


def start_server(corpus: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    exe = Path(sys.executable).with_name("drivebench")
    cmd = [str(exe), "serve", "--corpus", str(corpus), "--embedder", "hash", "--pipeline", "bm25", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not start")


def main() -> int:
    corpus = Path(resolve_corpus("acme-zh@1"))
    manifest = load_manifest(corpus)
    token = make_token(manifest.name, EVAL_SERVICE)
    queries = load_evalset(corpus / EVALSET_NAME)
    queries = (queries * (N // len(queries) + 1))[:N]
    queries = [q.model_copy(update={"query_id": f"{q.query_id}-{i}"}) for i, q in enumerate(queries)]
    proc, url = start_server(corpus)
    rows: dict[str, list[dict[str, float]]] = {"baseline": [], "probe": []}
    try:
        for _ in range(2):
            t0 = time.perf_counter()
            recs = asyncio.run(_baseline(HttpTarget(url, token), queries, RunConfig(top_k=10, concurrency=CONCURRENCY)))
            dt = time.perf_counter() - t0
            assert all(r.error is None for r in recs), "baseline requests failed"
            rows["baseline"].append({"seconds": dt, "requests": len(recs), "requests_per_s": len(recs) / dt})
            t0 = time.perf_counter()
            gt = GroundTruth(Drive.from_manifest(manifest, corpus), manifest)
            pairs, _ = sample_pairs(gt, N // 2, seed=0)
            builder = QueryBuilder(gt.drive, [p.doc_id for p in pairs])
            setup = time.perf_counter() - t0
            outcome = run_probe(
                HttpTarget(url, token), gt, pairs, builder, ProbeConfig(per_pair=2, concurrency=CONCURRENCY)
            )
            total = time.perf_counter() - t0
            r = outcome.result
            assert r["status"]["state"] == "ok" and r["counts"]["leaks"] == 0, r["status"]
            send = r["seconds"]
            rows["probe"].append(
                {
                    "setup_seconds": setup,
                    "send_judge_seconds": send,
                    "total_seconds": total,
                    "pairs": r["counts"]["pairs_probed"],
                    "requests": r["counts"]["requests"],
                    "requests_per_s": r["counts"]["requests"] / send,
                    "pairs_per_s_send_judge": r["counts"]["pairs_probed"] / send,
                    "pairs_per_s_total": r["counts"]["pairs_probed"] / total,
                }
            )
    finally:
        proc.terminate()
        proc.wait(30)
    base = max(rows["baseline"], key=lambda x: x["requests_per_s"])
    probe = max(rows["probe"], key=lambda x: x["requests_per_s"])
    ratio = probe["requests_per_s"] / base["requests_per_s"]
    result: dict[str, Any] = {
        "benchmark": "bench_probe",
        "corpus": f"acme-zh default ({len(manifest.documents)} documents, {len(manifest.users)} users)",
        "server": "drivebench serve, bm25, hash embedder, separate process",
        "concurrency": CONCURRENCY,
        "n": N,
        "quick": QUICK,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "baseline_eval_run": base,
        "probe": probe,
        "ratio_probe_over_baseline_requests_per_s": ratio,
        "target_ratio": TARGET_RATIO,
        "met": ratio >= TARGET_RATIO,
        "runs": rows,
        "note": "measured on a shared 2-core machine: absolute numbers are upper bounds on time",
    }
    write_report("bench_probe", result)
    print(f"baseline (eval-run queries): {base['requests_per_s']:.1f} req/s ({base['requests']} requests)")
    print(
        f"probe: {probe['requests_per_s']:.1f} req/s; {probe['pairs_per_s_send_judge']:.1f} pairs/s send+judge, "
        f"{probe['pairs_per_s_total']:.1f} pairs/s with setup ({probe['setup_seconds']:.1f} s setup)"
    )
    print(f"probe / baseline = {ratio:.2f} (target >= {TARGET_RATIO})")
    return 0 if result["met"] else 1


async def _baseline(target: HttpTarget, queries: list[Any], cfg: RunConfig) -> list[Any]:
    try:
        return await run_queries(target, queries, cfg)
    finally:
        await target.aclose()


if __name__ == "__main__":
    raise SystemExit(main())
