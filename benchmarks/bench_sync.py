"""eval sync's resolution and cost: how exactly it measures a lag it knows, how many probes per second it
sustains, and how long the whole ``revocations`` scenario takes.

* **Lag resolution**: the reference connector (``strategy=changes``, ``interval=1 s``) runs in this process, so
  the instant each of its syncs ends is known; ``eval sync`` (``--poll 0.25``) measures the lag of >= 50 changes
  on the default corpus (``DEFAULT_CORPUS``). The true lag of a pair is the end of the connector's first sync
  that started after the drive acknowledged the change; the error is measured minus true. Target: p95 of
  |error| <= poll + 0.2 s.
* **Probes per second**, two figures that must not be confused:
  * *sustained*: eval sync's own probe call (``SyncRunner._ask``: one recall request, answer read, logged)
    back to back for ``SUSTAIN_S`` seconds, ``CONCURRENCY`` at a time (a convergence round's gather), with no
    sleep: the rate the probing engine keeps up against the connector and against the simulator's own recall;
  * *average over the run*: requests / wall seconds of the resolution scenario, which includes the poll sleeps
    between rounds, reading the drive and planning each change, and waiting for setup grants to sync: what a
    run costs, not what the prober can do.
* **Scenario time**: the built-in ``revocations`` scenario against the simulator's own recall, on the seed
  corpus and on the default corpus, and their ratio; the classes the planner could not plan on either corpus
  are listed with what the drive lacks (``not_planned``).

The drive: ``drivebench serve`` in a process of its own (hash embedder, bm25). Writes
``benchmarks/results/bench_sync.json`` and ``.md``. ``BENCH_QUICK=1``: 20 changes (the resolution target then
needs >= 50 and reports MISSED). Run: ``.venv/bin/python -m benchmarks.bench_sync``.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import httpx

from benchmarks.report import report_checks
from drivebench.corpora.builtin import DEFAULT_CORPUS, resolve_corpus
from drivebench.drive.tokens import ADMIN_SERVICE, EVAL_SERVICE, SECRET_ENV, make_token
from drivebench.evaluator.sync.drive_client import DriveClient
from drivebench.evaluator.sync.evaluate import run_sync
from drivebench.evaluator.sync.runner import SyncConfig, SyncRunner
from drivebench.evaluator.sync.scenario import Scenario, load_scenario
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.corpus import load_manifest
from drivebench.server.process import free_port

QUICK = os.environ.get("BENCH_QUICK") == "1"
POLL, INTERVAL = 0.25, 1.0
SUSTAIN_S, CONCURRENCY = (2.0 if QUICK else 5.0), 6  # a round of 3 principals x 2 queries
DRIVEBENCH = Path(sys.executable).with_name("drivebench")
PER_CLASS = 4 if QUICK else 12
RESOLUTION = Scenario(
    "resolution",
    "revocations and content changes the connector reflects",
    [(c, PER_CLASS) for c in ("trashed", "deny-added", "moved-out", "grant-added", "new-version")],
)


class Drive:
    def __init__(self, corpus: str) -> None:
        self.corpus, self.secret, self.port = corpus, secrets.token_hex(16), free_port()
        self.name = load_manifest(resolve_corpus(corpus)).name  # tokens derive from the drive's name
        self.dir = Path(tempfile.mkdtemp(prefix="bench-sync-"))
        cmd = [str(DRIVEBENCH), "serve", "--corpus", corpus, "--embedder", "hash", "--pipeline", "bm25"]
        cmd += ["--port", str(self.port), "--data-dir", str(self.dir / "data"), "--no-access-log"]
        env = {**os.environ, SECRET_ENV: self.secret, "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=(self.dir / "log").open("wb"))
        end = time.monotonic() + 600
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise SystemExit(f"drivebench serve exited: {(self.dir / 'log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise SystemExit("drivebench serve did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def token(self, subject: str) -> str:
        return make_token(self.name, subject, self.secret.encode())

    def client(self) -> DriveClient:
        return DriveClient(self.url, self.token(ADMIN_SERVICE))

    def simulator_target(self) -> HttpTarget:
        return HttpTarget(f"{self.url}/api/mcp/recall", self.token(EVAL_SERVICE))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def sync(drive: Drive, target: HttpTarget, scenario: Scenario, name: str) -> tuple[dict[str, Any], float]:
    t0 = time.perf_counter()
    result = run_sync(drive.client(), target, name, scenario, SyncConfig(deadline_s=10, poll_s=POLL))
    return result, time.perf_counter() - t0


def connector(drive: Drive) -> tuple[Any, Any, int]:
    import uvicorn

    from drivebench.connector.app import create_connector_app
    from drivebench.connector.index import ConnectorIndex
    from drivebench.connector.sync import Syncer

    index = ConnectorIndex()
    syncer = Syncer(drive.client(), "changes", INTERVAL, index)
    syncer.start()
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_connector_app(index, syncer, "bench", admin_token=drive.token(ADMIN_SERVICE)),
            port=port,
            log_level="warning",
        )
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return syncer, server, port


def sustained(target: HttpTarget, user: str, queries: list[str]) -> dict[str, Any]:
    """eval sync's probe call back to back, CONCURRENCY at a time, for SUSTAIN_S seconds: no sleep, no planning."""
    import asyncio

    runner = SyncRunner(None, target, SyncConfig(poll_s=POLL))

    async def go() -> float:
        t0 = time.perf_counter()
        i = 0
        while time.perf_counter() - t0 < SUSTAIN_S:
            batch = [queries[(i + k) % len(queries)] for k in range(CONCURRENCY)]
            await asyncio.gather(*(runner._ask(user, q) for q in batch))
            i += CONCURRENCY
        return time.perf_counter() - t0

    seconds = asyncio.run(go())
    return {
        "requests": runner.requests,
        "failed": runner.errors,
        "seconds": round(seconds, 2),
        "probes_per_s": round(runner.requests / seconds, 1),
    }


def not_planned(run: dict[str, Any], corpus: str) -> list[dict[str, Any]]:
    """The classes the planner could not plan on ``corpus``, and what the drive lacks (the engine's reason)."""
    return [
        {"corpus": corpus, "class": cls, "changes": s["not_planned"], "why": s["not_planned_why"]}
        for cls, s in run["sync"]["classes"].items()
        if s.get("not_planned")
    ]


def lag_errors(result: dict[str, Any], timeline: list[tuple[float, float]]) -> list[float]:
    out = []
    for p in result["sync"]["pairs"]:
        if not (p["testable"] and p["converged"]):
            continue
        applied = datetime.fromisoformat(p["applied_at"]).timestamp()
        ends = [end for start, end in timeline if start >= applied]
        if ends:
            out.append(p["lag_s"] - (min(ends) - applied))
    return out


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))], 3)


def main() -> None:
    out: dict[str, Any] = {"poll_s": POLL, "interval_s": INTERVAL, "default_corpus": DEFAULT_CORPUS}
    default = Drive(DEFAULT_CORPUS)
    probe_queries = ["差旅报销标准", "年假怎么规定的", "信息安全", "项目管理办法", "会议纪要", "采购流程"]
    try:
        syncer, server, port = connector(default)
        url = f"http://127.0.0.1:{port}/api/mcp/recall"
        via_connector, seconds = sync(default, HttpTarget(url, "bench"), RESOLUTION, "connector")
        errors = lag_errors(via_connector, syncer.stats.timeline)
        # a target of its own: an HttpTarget's connection pool belongs to the event loop that first used it
        connector_sustained = sustained(HttpTarget(url, "bench"), "u001", probe_queries)
        server.should_exit = True
        syncer.stop()
        baseline, base_seconds = sync(default, default.simulator_target(), RESOLUTION, "simulator")
        simulator_sustained = sustained(default.simulator_target(), "u001", probe_queries)
        changes = len(via_connector["sync"]["changes"])
        out["resolution"] = {
            "changes": changes,
            "pairs": len(errors),
            "abs_error_p50_s": pct([abs(e) for e in errors], 0.5),
            "abs_error_p95_s": pct([abs(e) for e in errors], 0.95),
            "abs_error_max_s": pct([abs(e) for e in errors], 1.0),
            "error_mean_s": round(sum(errors) / len(errors), 3) if errors else None,
            "lag_p50_s": via_connector["sync"]["overall"]["revocation_lag_p50_s"],
            "not_converged": via_connector["sync"]["overall"]["not_converged"],
        }
        out["probes_sustained"] = {
            "concurrency": CONCURRENCY,
            "connector_probes_per_s": connector_sustained["probes_per_s"],
            "connector_requests": connector_sustained["requests"],
            "connector_failed": connector_sustained["failed"],
            "simulator_probes_per_s": simulator_sustained["probes_per_s"],
            "simulator_requests": simulator_sustained["requests"],
            "simulator_failed": simulator_sustained["failed"],
            "seconds_each": SUSTAIN_S,
        }
        out["probes_average_over_run"] = {
            "note": "requests / wall seconds of the resolution scenario, poll sleeps, drive reads, planning and "
            "setup waits included: the cost of a run, not the prober's rate",
            "connector_requests": via_connector["sync"]["errors"]["requests"],
            "connector_seconds": round(seconds, 2),
            "connector_avg_probes_per_s_incl_waits": round(via_connector["sync"]["errors"]["requests"] / seconds, 1),
            "simulator_requests": baseline["sync"]["errors"]["requests"],
            "simulator_seconds": round(base_seconds, 2),
            "simulator_avg_probes_per_s_incl_waits": round(baseline["sync"]["errors"]["requests"] / base_seconds, 1),
        }
        revocations = load_scenario("revocations")
        default_run, default_s = sync(default, default.simulator_target(), revocations, "simulator")
    finally:
        default.stop()
    seed = Drive("seed")
    try:
        seed_run, seed_s = sync(seed, seed.simulator_target(), revocations, "simulator")
    finally:
        seed.stop()
    skipped = not_planned(default_run, DEFAULT_CORPUS) + not_planned(seed_run, "seed")
    out["revocations_scenario"] = {
        "seed_seconds": round(seed_s, 2),
        "seed_changes": len(seed_run["sync"]["changes"]),
        "seed_pairs": seed_run["sync"]["overall"]["pairs"],
        "default_seconds": round(default_s, 2),
        "default_changes": len(default_run["sync"]["changes"]),
        "default_pairs": default_run["sync"]["overall"]["pairs"],
        "ratio_default_to_seed": round(default_s / seed_s, 2),
        "not_planned": skipped or "none: every revoking class was planned on both corpora",
    }
    r, p, s = out["resolution"], out["probes_sustained"], out["revocations_scenario"]
    a = out["probes_average_over_run"]
    print(f"lag resolution over {r['pairs']} pairs of {r['changes']} changes (poll {POLL} s, interval {INTERVAL} s):")
    print(
        f"  |measured - true| p50 {r['abs_error_p50_s']} s, p95 {r['abs_error_p95_s']} s, max {r['abs_error_max_s']} s"
    )
    print(
        f"probes/s sustained ({CONCURRENCY} at a time, no sleep): connector {p['connector_probes_per_s']}, "
        f"simulator {p['simulator_probes_per_s']}"
    )
    print(
        f"probes/s averaged over the run (poll sleeps, planning, setup waits included): connector "
        f"{a['connector_avg_probes_per_s_incl_waits']}, simulator {a['simulator_avg_probes_per_s_incl_waits']}"
    )
    print(
        f"revocations scenario: seed {s['seed_seconds']} s ({s['seed_changes']} changes), {DEFAULT_CORPUS} "
        f"{s['default_seconds']} s ({s['default_changes']} changes) ({s['ratio_default_to_seed']}x)"
    )
    for row in skipped:
        print(f"  not planned on {row['corpus']}: {row['class']} x{row['changes']}: {row['why']}")
    checks = {
        ">= 50 changes measured": r["changes"] >= 50,
        f"p95 |lag error| <= poll + 0.2 s ({POLL + 0.2} s)": r["abs_error_p95_s"] is not None
        and r["abs_error_p95_s"] <= POLL + 0.2,
        "every change reflected by the connector": r["not_converged"] == 0,
        "no sustained probe failed": p["connector_failed"] == 0 and p["simulator_failed"] == 0,
        "revocations scenario converged on both corpora": not seed_run["sync"]["overall"]["revocations_not_converged"]
        and not default_run["sync"]["overall"]["revocations_not_converged"],
        "every revoking class planned on both corpora": not skipped,
    }
    report_checks("bench_sync", out, checks)


if __name__ == "__main__":
    main()
