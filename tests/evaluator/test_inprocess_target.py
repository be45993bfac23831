"""The in-process target gives the same run as the HTTP target against the same simulator."""

from __future__ import annotations

from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import corpus_oracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.targets.http import HttpTarget
from drivebench.formats.evalset import EvalQuery
from drivebench.simulator.target import InProcessTarget
from drivebench.testing import ServedSimulator


def test_inprocess_equals_http(drivebench_server: ServedSimulator, seed_evalset: list[EvalQuery]) -> None:
    sim = drivebench_server.sim
    assert sim.corpus_dir is not None
    oracle = corpus_oracle(sim.corpus_dir)
    cfg = RunConfig(top_k=10, concurrency=4)
    local = evaluate(InProcessTarget(sim), seed_evalset, run_config=cfg, oracle=oracle)
    remote = evaluate(
        HttpTarget(drivebench_server.url, sim.tokens.eval_token), seed_evalset, run_config=cfg, oracle=oracle
    )
    assert [r.ranked_doc_ids for r in local.records] == [r.ranked_doc_ids for r in remote.records]
    assert local.result["metrics"]["hit_rate@10"] == remote.result["metrics"]["hit_rate@10"]
    assert local.result["metrics"]["leak_rate@10"] == 0.0
    assert all(r.error is None for r in local.records)
    # both record what the simulator ran with (a clean server here)
    assert local.result["run_info"]["faults"] == remote.result["run_info"]["faults"] == []
