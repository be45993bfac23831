"""Throughput with several worker processes (``serve --workers N``), for BM25 and dense recall.

Python runs one thread at a time per process, so a single server process cannot spend two cores on recall:
at 4 requests in flight it answers about as many requests per second as at 1 (``bench_recall_http``).
``serve --workers N`` runs N read-only replica processes on one socket (``drivebench.server.process``). This
benchmark starts real ``drivebench serve`` processes (the client runs in this process, as a real client
would, one keep-alive connection per client thread) and prints, side by side in one run:

* requests/s at 1 and 4 in flight with ``--workers 1`` and ``--workers 2``, per pipeline (``bm25``,
  ``dense`` with the e5 embedder), and the ratios: 4-in-flight over 1-in-flight (target >= 1.5 on 2 cores)
  and 2 workers over 1 worker at 4 in flight;
* the bound: CPU the server processes and this client spend per second of wall time (``/proc`` utime +
  stime), at 1 and at 4 in flight, and from it the CPU per request. With every core busy at 4 in flight's
  CPU per request, throughput can reach at most ``cores / cpu_per_request_at_4``; over the single flight
  that is the most any concurrency could gain here (``bound_4_over_1``). ``cores / busy at 1`` alone
  (``headroom_4_over_1``) is no bound for dense: e5 encodes a lone query on a team of every core and
  concurrent queries on one thread each, which costs less CPU per query;
* dense recall in process from 1 and 4 threads, side by side for the query encoder pool the server runs
  (``retrieval/pipelines.py``, ``QueryBatcher``) and one encoder thread on the whole thread team (the baseline): requests/s,
  cores busy, query encodes per model call, over ``BENCH_BATCHER_ROUNDS`` alternating rounds (medians).

Every figure on a 2-core machine shared with other work is an upper bound (the client shares the cores).
``BENCH_QUICK=1``: the seed corpus, fewer requests. Writes ``benchmarks/results/bench_workers.json`` and ``.md``.
Run: ``flock /tmp/drivebench-heavy.lock .venv/bin/python -m benchmarks.bench_workers``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DRIVEBENCH_TOKEN_SECRET", "bench-workers-" + "0" * 32)  # the servers' tokens, known here


from drivebench.api import load_simulator

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # as a script too: python benchmarks/bench_workers.py
from benchmarks.http_harness import throughput
from benchmarks.report import report_checks
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.search.retrieval.pipelines import QueryBatcher
from drivebench.server.process import ReplicaSpec, limit_search_threads, start_replicas
from drivebench.simulator.backend import SimConfig

QUICK = os.environ.get("BENCH_QUICK") == "1"
CORPUS = "seed" if QUICK else "acme-zh"
EMBEDDER = "e5"
PIPELINES = ("bm25", "dense")
WORKERS = (1, 2)
IN_FLIGHT = (1, 4)
REQUESTS = int(os.environ.get("BENCH_REQUESTS", 120 if QUICK else 400))
TARGET = 1.5
BATCHER_ROUNDS = int(os.environ.get("BENCH_BATCHER_ROUNDS", 2 if QUICK else 5))


def process_cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` and every process below it (the replicas of ``serve --workers``)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # exited meanwhile
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += times.get(p, 0.0)
        todo.extend(children.get(p, []))
    return total


def cores_busy(pid: int, run: Any) -> tuple[float, float]:
    """(result of ``run()``, cores kept busy meanwhile by the server ``pid`` and this client together)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    server0, client0, t0 = process_cpu_seconds(pid), me.ru_utime + me.ru_stime, time.perf_counter()
    out = run()
    wall = time.perf_counter() - t0
    me = resource.getrusage(resource.RUSAGE_SELF)
    return out, (process_cpu_seconds(pid) - server0 + me.ru_utime + me.ru_stime - client0) / wall


def measure_server(
    spec: ReplicaSpec, workers: int, headers: dict[str, str], bodies: list[bytes]
) -> tuple[dict[str, float], dict[str, float]]:
    """``serve --workers N`` of ``spec``: requests/s at 1 and 4 in flight (best of two rounds in alternating
    order, the least disturbed) and the cores busy in that best round, each keyed by the number in flight."""
    proc, url = start_replicas(spec, workers)
    try:
        throughput(url, headers, bodies[:40], 4)  # warm every worker
        best: dict[str, float] = {}
        busy_at: dict[str, float] = {}
        for rnd in range(2):  # 1 then 4, then 4 then 1
            for n in IN_FLIGHT if rnd == 0 else IN_FLIGHT[::-1]:
                got, busy = cores_busy(proc.pid, lambda n=n: throughput(url, headers, bodies, n))
                if got >= best.get(str(n), 0.0):
                    best[str(n)] = round(got, 1)
                    busy_at[str(n)] = round(busy, 2)
        return best, busy_at
    finally:
        proc.terminate()
        proc.wait(30)


def batcher_in_process(sim: Any, queries: list[Any], principals: dict[str, Any]) -> dict[str, Any]:
    """Dense recall from 1 and from 4 threads in this process, side by side for two query encoders: the
    encoder pool (``QueryBatcher`` as the server runs it: the embedder's ``concurrent_calls`` encoder threads,
    the thread budget split over the calls running) and one encoder thread on the whole team (the previous
    design, the baseline). Rounds alternate the order; medians of ``BATCHER_ROUNDS``. Per design: requests/s,
    query encodes per model call, and cores busy (this process's CPU time over wall time)."""
    retriever = sim.retriever_for("dense")
    serving = retriever.query_batcher
    designs = {"pool": QueryBatcher(sim.embedder), "one_encoder_thread": QueryBatcher(sim.embedder, workers=1)}
    samples: dict[str, dict[str, list[float]]] = {d: {} for d in designs}
    try:
        for rnd in range(BATCHER_ROUNDS):
            for name in designs if rnd % 2 == 0 else list(designs)[::-1]:
                batcher = retriever.query_batcher = designs[name]
                for n in IN_FLIGHT:
                    shares = [queries[i::n] for i in range(n)]
                    before = (batcher.batches, batcher.encoded)

                    def run(share: list[Any]) -> None:
                        for q in share:
                            sim.recall(principals[q.user_id], q.query, 10, pipeline="dense")

                    threads = [threading.Thread(target=run, args=(s,)) for s in shares]
                    cpu0, t0 = _cpu(), time.perf_counter()
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
                    wall = time.perf_counter() - t0
                    got = samples[name]
                    got.setdefault(f"rps_{n}", []).append(len(queries) / wall)
                    got.setdefault(f"busy_{n}", []).append((_cpu() - cpu0) / wall)
                    calls, encoded = batcher.batches - before[0], batcher.encoded - before[1]
                    got.setdefault(f"queries_per_encode_{n}", []).append(encoded / max(1, calls))
    finally:
        retriever.query_batcher = serving
    out: dict[str, Any] = {}
    for name, got in samples.items():
        med = {k: round(statistics.median(v), 2) for k, v in got.items()}
        med["rps_4_over_1"] = round(med["rps_4"] / med["rps_1"], 2)
        med["workers"] = designs[name].workers
        out[name] = med
    out["pool_over_one_encoder_thread_at_4"] = round(out["pool"]["rps_4"] / out["one_encoder_thread"]["rps_4"], 2)
    return out


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def main() -> None:
    limit_search_threads()
    sim = load_simulator(CORPUS, config=SimConfig(pipeline="bm25", embedder=EMBEDDER, rerank=None))
    assert sim.corpus_dir is not None
    sim.use_token_secret(os.environ["DRIVEBENCH_TOKEN_SECRET"].encode())
    queries = [q for q in load_evalset(sim.corpus_dir / EVALSET_NAME) if q.user_id and q.as_of is None]
    bodies = [json.dumps({"query": q.query, "user_id": q.user_id, "top_k": 10}).encode() for q in queries]
    bodies = (bodies * (REQUESTS // max(1, len(bodies)) + 1))[:REQUESTS]
    headers = {"Authorization": f"Bearer {sim.tokens.eval_token}"}
    principals = {q.user_id: sim.engine.user_principal(q.user_id) for q in queries if q.user_id}
    sim.recall(principals[queries[0].user_id], queries[0].query, 10, pipeline="dense")  # model loaded
    batching = batcher_in_process(sim, queries[: REQUESTS // 2], principals)
    rps: dict[str, dict[str, dict[str, float]]] = {}
    busy_at: dict[str, dict[str, dict[str, float]]] = {str(n): {p: {} for p in PIPELINES} for n in IN_FLIGHT}
    busy_at_1 = busy_at["1"]
    cores = os.cpu_count() or 1
    for pipeline in PIPELINES:
        rps[pipeline] = {}
        for workers in WORKERS:
            spec = ReplicaSpec(str(sim.corpus_dir), pipeline, EMBEDDER, [], rerank=None)
            rps[pipeline][str(workers)], busy = measure_server(spec, workers, headers, bodies)
            for n, b in busy.items():
                busy_at[n][pipeline][str(workers)] = b
    result: dict[str, Any] = {
        "corpus": CORPUS,
        "embedder": EMBEDDER,
        "requests": len(bodies),
        "requests_per_s": rps,
        "cores": cores,
        "cores_busy_at_1_in_flight": busy_at_1,
        "cores_busy_at_4_in_flight": busy_at["4"],
    }
    # no CPU time read (no /proc): not measured (None), never a huge plausible number
    cpu_ms = {
        p: {n: round(1000 * b / rps[p]["1"][n], 1) if (b := busy_at[n][p]["1"]) > 0 else None for n in ("1", "4")}
        for p in PIPELINES
    }
    result["cpu_ms_per_request_one_worker"] = cpu_ms
    result["headroom_4_over_1"] = {p: round(cores / b, 2) if (b := busy_at_1[p]["1"]) > 0 else None for p in PIPELINES}
    result["bound_4_over_1"] = {
        p: round(cores * 1000 / c / rps[p]["1"]["1"], 2) if (c := cpu_ms[p]["4"]) else None for p in PIPELINES
    }
    print(f"{CORPUS}, {len(bodies)} requests per measurement, embedder {EMBEDDER} (2 shared cores: upper bounds)")
    checks = {}
    for pipeline in PIPELINES:
        one = rps[pipeline]["1"]
        for workers in WORKERS:
            r = rps[pipeline][str(workers)]
            scaling = r["4"] / r["1"]
            vs_single = r["4"] / one["1"]
            result.setdefault("ratios", {}).setdefault(pipeline, {})[str(workers)] = {
                "4_over_1_same_server": round(scaling, 2),
                "4_over_single_flight_of_1_worker": round(vs_single, 2),
            }
            print(
                f"  {pipeline:<6} --workers {workers}: req/s 1 in flight {r['1']:7.1f}  4 in flight {r['4']:7.1f}"
                f"  ({scaling:4.2f}x its own 1-in-flight; {vs_single:4.2f}x one worker at 1 in flight)"
            )
        best = max(rps[pipeline][str(w)]["4"] for w in WORKERS) / one["1"]
        bound = result["bound_4_over_1"][pipeline]
        print(
            f"  {pipeline:<6} one worker, cores busy (server + client) at 1 in flight"
            f" {busy_at_1[pipeline]['1']:.2f}, at 4 {busy_at['4'][pipeline]['1']:.2f}"
            f" ({busy_at['4'][pipeline]['1'] / cores:.0%}; two workers {busy_at['4'][pipeline]['2']:.2f}); CPU per"
            f" request {cpu_ms[pipeline]['1']} ms at 1, {cpu_ms[pipeline]['4']} ms at 4: at 4 in flight's CPU per"
            f" request {cores} cores answer at most "
            + (f"{bound:.2f}x the single flight" if bound is not None else "(not measured: no CPU time read)")
        )
        checks[f"{pipeline}: 4 in flight >= {TARGET}x single-flight (best --workers; bound here {bound}x)"] = (
            best >= TARGET
        )
    print(f"  dense recall in process, {BATCHER_ROUNDS} rounds (medians; 1 and 4 threads; cores busy; queries/encode):")
    for name in ("pool", "one_encoder_thread"):
        b = batching[name]
        print(
            f"    {name:<18} ({b['workers']} encoder threads): 1 thread {b['rps_1']:6.1f} req/s (busy {b['busy_1']:.2f}, "
            f"{b['queries_per_encode_1']}/call)  4 threads {b['rps_4']:6.1f} req/s (busy {b['busy_4']:.2f}, "
            f"{b['queries_per_encode_4']}/call)  {b['rps_4_over_1']:.2f}x"
        )
    pool = batching["pool"]
    pool_bound = round(cores * pool["rps_4"] / pool["busy_4"] / pool["rps_1"], 2) if pool["busy_4"] > 0 else None
    print(
        f"    pool over one encoder thread at 4 in flight: {batching['pool_over_one_encoder_thread_at_4']:.2f}x; "
        f"the pool's bound at its CPU per request at 4 threads: {pool_bound}x its 1 thread"
    )
    batching["pool_bound_4_over_1"] = pool_bound
    result["dense_batcher_in_process"] = batching
    checks["dense in process: the encoder pool at 4 in flight >= one encoder thread at 4 in flight"] = (
        batching["pool_over_one_encoder_thread_at_4"] >= 1.0
    )
    report_checks("bench_workers", result, checks)  # exits 1 when a target was missed


if __name__ == "__main__":
    main()
