"""The snapshot fingerprint of the state an evaluation ran against lands in metrics.json run_info."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from drivebench.evaluator.evaluate import evaluate, write_outputs
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.corpus import EVALSET_NAME
from drivebench.formats.evalset import load_evalset
from drivebench.server.process import start_in_thread
from tests.support.sims import fresh_sim


def test_metrics_run_info_carries_the_snapshot(tmp_path: Path) -> None:
    sim = fresh_sim()
    assert sim.corpus_dir is not None
    queries = load_evalset(sim.corpus_dir / EVALSET_NAME)
    server = start_in_thread(sim)
    try:
        runs = []
        for round_ in range(2):
            target = HttpTarget(server.url, sim.tokens.eval_token)
            evaluation = evaluate(target, queries, ks=[1, 5, 10], run_config=RunConfig(top_k=10, concurrency=4))
            out = write_outputs(evaluation, tmp_path / f"run{round_}")
            metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
            records = [json.loads(line) for line in (out / "run.jsonl").read_text(encoding="utf-8").splitlines()]
            assert all(r["snapshot"] == sim.snapshot() for r in records), "every record carries the fingerprint"
            assert metrics["run_info"]["snapshot"] == sim.snapshot()
            runs.append(metrics["run_info"]["snapshot"])
            # change the drive between the two runs: the next run reports another state
            admin = {"Authorization": f"Bearer {sim.tokens.admin_token}"}
            if round_ == 0:
                r = httpx.post(f"{server.url}/api/v1/files/d0001/trash", headers=admin, timeout=30)
                assert r.status_code == 200
        assert runs[0] != runs[1]
    finally:
        server.stop()
