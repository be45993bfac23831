"""Does an admin write wait behind readers? A real ``drivebench serve`` (acme-zh@2, BM25): an admin renames a
document every 0.25 s, first with the server idle (the baseline), then while reader threads recall without pause
as random users through the evaluation token, each with a random past ``as_of`` (what a probe session sends:
an evaluate-as and a point-in-time engine per request, every engine cache dropped by each write).

Prints the rename latency idle and under load (p50, p95, max), their ratio and the reads served. Target: no
write waits longer than ``MAX_WRITE_S`` under load.

    python -m benchmarks.bench_write_under_load         # BENCH_SECONDS=30 by default per phase
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

from benchmarks.report import report_checks
from drivebench.server.process import free_port, spawn_server

CORPUS = "acme-zh@2"
SECONDS = float(os.environ.get("BENCH_SECONDS", "30"))
READERS = 4
MAX_WRITE_S = 1.0
QUERIES = ["预算 审批", "项目 技术方案", "会议 纪要", "合同 付款", "年度 计划"]


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50": round(statistics.median(values) * 1000, 2),
        "p95": round(values[int(0.95 * (len(values) - 1))] * 1000, 2),
        "max": round(values[-1] * 1000, 2),
    }


def _renames(client: httpx.Client, doc: dict[str, Any], seconds: float, tag: str) -> list[float]:
    latencies, end, i = [], time.monotonic() + seconds, 0
    while time.monotonic() < end:
        i += 1
        started = time.perf_counter()
        r = client.patch(f"/api/v1/files/{doc['doc_id']}", json={"name": f"{tag}-{i}-{doc['name']}"})
        latencies.append(time.perf_counter() - started)
        if r.status_code != 200:
            raise SystemExit(f"rename answered {r.status_code}: {r.text[:300]}")  # a failure is no latency
        time.sleep(0.25)
    return latencies


def main() -> None:
    os.environ["DRIVEBENCH_TOKEN_SECRET"] = "bench-write-under-load-secret-0123456789"  # the server's and ours
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = spawn_server(
        [
            sys.executable,
            "-m",
            "drivebench",
            "serve",
            "--corpus",
            CORPUS,
            "--pipeline",
            "bm25",
            "--embedder",
            "hash",
            "--port",
            str(port),
            "--no-access-log",
        ],
        url,
        "drivebench serve",
        timeout=600,
    )
    try:
        tokens = json.loads(
            subprocess.run(
                [sys.executable, "-m", "drivebench", "tokens", "--corpus", CORPUS, "--json"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        admin = next(t["token"] for t in tokens if t["user_id"] == "svc:admin")
        evaluator = next(t["token"] for t in tokens if t["user_id"] == "svc:evaluator")
        users = [t["user_id"] for t in tokens if not t["user_id"].startswith("svc:")]
        with httpx.Client(base_url=url, timeout=120, headers={"Authorization": f"Bearer {admin}"}) as client:
            doc = client.get("/api/v1/files", params={"folder": "/", "recursive": "true"}).json()["files"][0]
            print(f"idle: renaming {doc['doc_id']} every 0.25 s for {SECONDS:.0f} s ...", flush=True)
            idle = _renames(client, doc, SECONDS, "idle")

            stop, reads, failures = threading.Event(), [0] * READERS, [0] * READERS
            rng = random.Random(7)

            def reader(k: int) -> None:
                with httpx.Client(base_url=url, timeout=120) as c:
                    while not stop.is_set():
                        body = {
                            "query": rng.choice(QUERIES),
                            "user_id": rng.choice(users),
                            "top_k": 10,
                            "as_of": f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}T12:00:00Z",
                        }
                        r = c.post("/api/mcp/recall", json=body, headers={"Authorization": f"Bearer {evaluator}"})
                        reads[k] += 1
                        failures[k] += r.status_code != 200

            threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(READERS)]
            for t in threads:
                t.start()
            print(f"loaded: the same with {READERS} readers recalling without pause ...", flush=True)
            loaded = _renames(client, doc, SECONDS, "loaded")
            stop.set()
            for t in threads:
                t.join(30)
    finally:
        server.terminate()
        server.wait(30)
    if sum(failures):
        raise SystemExit(f"{sum(failures)} of {sum(reads)} reads failed: no figure from a failing run")
    idle_ms, loaded_ms = _ms(idle), _ms(loaded)
    ratio = round(loaded_ms["p50"] / idle_ms["p50"], 2)
    print(f"\n{'':>8} {'writes':>7} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for label, lat, ms in (("idle", idle, idle_ms), ("loaded", loaded, loaded_ms)):
        print(f"{label:>8} {len(lat):>7} {ms['p50']:>8} {ms['p95']:>8} {ms['max']:>8}")
    print(f"loaded/idle p50: {ratio}x; reads served while loaded: {sum(reads)} ({sum(reads) / SECONDS:.0f}/s)")
    result = {
        "corpus": CORPUS,
        "pipeline": "bm25",
        "seconds_per_phase": SECONDS,
        "readers": READERS,
        "reads_served": sum(reads),
        "reads_per_s": round(sum(reads) / SECONDS, 1),
        "rename_ms": {"idle": idle_ms, "loaded": loaded_ms},
        "writes": {"idle": len(idle), "loaded": len(loaded)},
        "loaded_over_idle_p50": ratio,
    }
    checks = {f"no rename waits longer than {MAX_WRITE_S} s under load": loaded_ms["max"] <= MAX_WRITE_S * 1000}
    report_checks("bench_write_under_load", result, checks)


if __name__ == "__main__":
    main()
