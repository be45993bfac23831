"""Scoring reports its progress (`eval run`'s scoring step shows a bar): ``evaluate``'s
``scoring_progress`` counts the queries the leak oracle has judged, and the wrapped, memoised oracle answers
exactly as Casbin's ``enforce`` does."""

from __future__ import annotations

from drivebench.evaluator.evaluate import evaluate
from drivebench.evaluator.oracle import DriveOracle, corpus_oracle
from drivebench.evaluator.oracle_progress import ProgressOracle
from drivebench.evaluator.runner import RunConfig
from drivebench.evaluator.scoring import score
from drivebench.formats.evalset import EvalQuery
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet
from drivebench.simulator.target import InProcessTarget
from tests.support.decisions import enforce_doc


def test_scoring_progress_counts_judged_queries_and_changes_no_number(
    sim: Simulator, seed_evalset: list[EvalQuery], drivebench_faults: FaultSet
) -> None:
    assert sim.corpus_dir is not None
    drivebench_faults.enable("leaky-acl", share=0.5)  # leaks, so the oracle's answers show in the metrics
    queries = seed_evalset[:16]
    calls: list[tuple[int, int]] = []
    ev = evaluate(
        InProcessTarget(sim),
        queries,
        ks=(1, 10),
        run_config=RunConfig(top_k=10, concurrency=2),
        oracle=corpus_oracle(sim.corpus_dir),
        scoring_progress=lambda done, total: calls.append((done, total)),
    )
    n = len(queries)
    assert calls[0] == (0, n) and calls[-1] == (n, n)
    assert {total for _, total in calls} == {n}
    done = [d for d, _ in calls]
    assert done == sorted(done) and set(range(n + 1)) <= set(done)  # every judged query counted, in order
    plain = score(queries, ev.records, (1, 10), oracle=corpus_oracle(sim.corpus_dir), top_k=10)  # as evaluate
    assert ev.result["metrics"]["leak_rate@10"] > 0
    assert plain["metrics"] == ev.result["metrics"] and plain["per_query"] == ev.result["per_query"]
    # the wrapper says what it wraps
    assert ev.result["oracles"]["leak"]["source"] == plain["oracles"]["leak"]["source"]


def test_memoised_oracle_answers_as_enforce(sim: Simulator, seed_evalset: list[EvalQuery]) -> None:
    assert sim.corpus_dir is not None
    oracle = corpus_oracle(sim.corpus_dir)
    docs = sorted(oracle.engine.doc_index)[:: max(1, len(oracle.engine.doc_index) // 25)]
    steps: list[int] = []
    wrapped = ProgressOracle(oracle, steps.append)
    for q in seed_evalset[:12]:
        at = q.as_of or oracle.at
        expected = [d for d in docs if not enforce_doc(oracle.engine, oracle.principal(q), d, "preview", at)]
        assert [d for d in docs if not oracle(q, d)] == expected
        assert [d for d in docs if not oracle(q, d)] == expected  # asked again: the memo, same answers
        assert wrapped.denied(q, docs) == expected
    assert steps == list(range(1, 13)) and isinstance(oracle, DriveOracle)
    assert not oracle(seed_evalset[0], "no-such-document")  # unknown: fail closed
