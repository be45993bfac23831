"""eval sync's resolution and cost: how exactly it measures a lag it knows, how many probes per second it
sustains, and how long the whole ``revocations`` scenario takes.

* **Lag resolution**: the reference connector (``strategy=changes``, ``interval=1 s``) runs in this process, so
  the instant each of its syncs ends is known; ``eval sync`` (``--poll 0.25``) measures the lag of >= 50 changes
  on the default corpus. The true lag of a pair is the end of the connector's first sync that started after the
  drive acknowledged the change; the error is measured minus true. Target: p95 of |error| <= poll + 0.2 s.
* **Probes per second** over the same run, side by side with the same scenario against the simulator's own
  recall (the baseline: no sync lag, so the run is all probing and planning).
* **Scenario time**: the built-in ``revocations`` scenario against the simulator's own recall, on the seed
  corpus and on the default corpus (acme-zh), and their ratio.

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
from drivebench.drive.tokens import ADMIN_SERVICE, EVAL_SERVICE, SECRET_ENV, make_token
from drivebench.evaluator.sync.drive_client import DriveClient
from drivebench.evaluator.sync.evaluate import run_sync
from drivebench.evaluator.sync.runner import SyncConfig
from drivebench.evaluator.sync.scenario import Scenario, load_scenario
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.server.process import free_port

QUICK = os.environ.get("BENCH_QUICK") == "1"
POLL, INTERVAL = 0.25, 1.0
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
        return make_token(self.corpus, subject, self.secret.encode())

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
        uvicorn.Config(create_connector_app(index, syncer, "bench"), port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return syncer, server, port


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
    out: dict[str, Any] = {"poll_s": POLL, "interval_s": INTERVAL}
    default = Drive("acme-zh")
    try:
        syncer, server, port = connector(default)
        target = HttpTarget(f"http://127.0.0.1:{port}/api/mcp/recall", "bench")
        via_connector, seconds = sync(default, target, RESOLUTION, "connector")
        errors = lag_errors(via_connector, syncer.stats.timeline)
        server.should_exit = True
        syncer.stop()
        baseline, base_seconds = sync(default, default.simulator_target(), RESOLUTION, "simulator")
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
        out["probes"] = {
            "connector_requests": via_connector["sync"]["errors"]["requests"],
            "connector_seconds": round(seconds, 2),
            "connector_probes_per_s": round(via_connector["sync"]["errors"]["requests"] / seconds, 1),
            "simulator_requests": baseline["sync"]["errors"]["requests"],
            "simulator_seconds": round(base_seconds, 2),
            "simulator_probes_per_s": round(baseline["sync"]["errors"]["requests"] / base_seconds, 1),
        }
        out["probes"]["ratio"] = round(
            out["probes"]["connector_probes_per_s"] / out["probes"]["simulator_probes_per_s"], 3
        )
        revocations = load_scenario("revocations")
        default_run, default_s = sync(default, default.simulator_target(), revocations, "simulator")
    finally:
        default.stop()
    seed = Drive("seed")
    try:
        seed_run, seed_s = sync(seed, seed.simulator_target(), revocations, "simulator")
    finally:
        seed.stop()
    out["revocations_scenario"] = {
        "seed_seconds": round(seed_s, 2),
        "seed_changes": len(seed_run["sync"]["changes"]),
        "default_seconds": round(default_s, 2),
        "default_changes": len(default_run["sync"]["changes"]),
        "ratio_default_to_seed": round(default_s / seed_s, 2),
    }
    r, p, s = out["resolution"], out["probes"], out["revocations_scenario"]
    print(f"lag resolution over {r['pairs']} pairs of {r['changes']} changes (poll {POLL} s, interval {INTERVAL} s):")
    print(
        f"  |measured - true| p50 {r['abs_error_p50_s']} s, p95 {r['abs_error_p95_s']} s, max {r['abs_error_max_s']} s"
    )
    print(
        f"probes/s: connector {p['connector_probes_per_s']}, simulator (baseline) {p['simulator_probes_per_s']} ({p['ratio']}x)"
    )
    print(
        f"revocations scenario: seed {s['seed_seconds']} s, default {s['default_seconds']} s ({s['ratio_default_to_seed']}x)"
    )
    checks = {
        ">= 50 changes measured": r["changes"] >= 50,
        f"p95 |lag error| <= poll + 0.2 s ({POLL + 0.2} s)": r["abs_error_p95_s"] is not None
        and r["abs_error_p95_s"] <= POLL + 0.2,
        "every change reflected by the connector": r["not_converged"] == 0,
        "revocations scenario converged on both corpora": not seed_run["sync"]["overall"]["revocations_not_converged"]
        and not default_run["sync"]["overall"]["revocations_not_converged"],
    }
    report_checks("bench_sync", out, checks)


if __name__ == "__main__":
    main()
