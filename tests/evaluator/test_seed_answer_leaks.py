"""Answer leaks and answer outcomes on the seed corpus's own facts: the clean simulator's answers to the whole
seed eval set state no fact of a document their asker may not preview (measured, with its bound), and the
``answer-unfiltered-context`` fault does. In-process over the session simulator (hash embedder)."""

from __future__ import annotations

import pytest

from drivebench.api import EvalOptions, evaluate
from drivebench.evaluator.metrics.leak_bound import upper_bound
from drivebench.formats.evalset import EvalQuery
from drivebench.simulator.backend import Simulator
from drivebench.simulator.faults import FaultSet


def _permission_outcomes(result: dict) -> dict[str, int]:
    stratum = result["answer_outcomes"]["strata"]["kind"]["permission"]
    return {outcome: row["count"] for outcome, row in stratum["outcomes"].items()}


def test_the_clean_simulator_states_no_seed_fact_its_asker_may_not_know(
    sim: Simulator, seed_evalset: list[EvalQuery]
) -> None:
    assert sim.corpus_dir is not None
    result = evaluate(sim, seed_evalset, EvalOptions(corpus=sim.corpus_dir, answers=True, preflight=False)).result
    n = len(seed_evalset)
    assert result["oracles"]["answer_leak"]["measured"] is True
    assert "108 facts" in result["oracles"]["answer_leak"]["source"]
    section = result["answer_leaks"]
    assert section["queries_judged"] == n and result["counts"]["queries_with_answer_leak"] == 0
    assert result["metrics"]["answer_leak_rate"] == 0.0
    assert section["upper_bound_95"] == pytest.approx(upper_bound(0, n))
    assert all(not row["answer_leaked"] for row in result["per_query"])
    # every answer is judged, the permission questions too (the forbidden documents' facts say what a leak
    # would state), and none of them leaks
    outcomes = result["answer_outcomes"]
    assert outcomes["queries_judged"] == n and outcomes["queries_not_judged"] == 0
    assert outcomes["outcomes"]["leak"]["count"] == 0 and outcomes["outcomes"]["error"]["count"] == 0
    permission = _permission_outcomes(result)
    asked = sum(1 for q in seed_evalset if q.tags.get("kind") == "permission")
    assert sum(count for outcome, count in permission.items() if outcome != "right") == asked > 0
    assert permission["leak"] == 0


def test_an_unfiltered_answer_context_leaks_seed_facts(
    sim: Simulator, seed_evalset: list[EvalQuery], drivebench_faults: FaultSet
) -> None:
    assert sim.corpus_dir is not None
    drivebench_faults.enable("answer-unfiltered-context")
    result = evaluate(sim, seed_evalset, EvalOptions(corpus=sim.corpus_dir, answers=True, preflight=False)).result
    n, leaking = len(seed_evalset), result["counts"]["queries_with_answer_leak"]
    assert leaking > 0 and result["metrics"]["answer_leak_rate"] == leaking / n
    assert result["answer_leaks"]["upper_bound_95"] == pytest.approx(upper_bound(leaking, n))
    assert result["counts"]["queries_with_leak"] == 0  # the results were filtered: only the answers leak
    # the fault's answers state what the permission questions' forbidden documents own
    assert _permission_outcomes(result)["leak"] > 0
    leaked = {(leak["text"], leak["doc_id"]) for row in result["per_query"] for leak in row["answer_leaked"]}
    assert ("3亿元", "d0020") in leaked  # the 2027 financing plan, in its break-inheritance folder
