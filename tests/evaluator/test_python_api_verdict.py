"""``api.evaluate`` judges the verdict and the gates as ``eval run`` does: a leaking run never reads "ok"."""

from __future__ import annotations

from typing import Any

import pytest

from drivebench.api import evaluate
from drivebench.evaluator.gates import GateError
from drivebench.evaluator.options import EvalOptions
from tests.support.evalrecords import make_query

QUERIES = [make_query(f"q{i}", ["d0001"], forbidden=["d0099"]) for i in range(4)]


def leaky(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[str]:
    return ["d0001", "d0099"]  # the gold document, then one the asker may not preview


def test_a_leaking_run_fails_its_verdict_and_its_status_is_not_ok() -> None:
    evaluation = evaluate(leaky, QUERIES, EvalOptions(preflight=False))
    assert evaluation.result["counts"]["queries_with_leak"] == 4
    assert evaluation.result["status"]["state"] == "gates_failed"
    assert evaluation.verdict is not None and evaluation.verdict["state"] == "failed"
    assert evaluation.exit_code == 1 and evaluation.passed is False
    assert [g.expr for g in evaluation.gates if g.failed] == ["no leaks"]
    assert list(evaluation.result)[:2] == ["verdict", "status"]  # metrics.json's order, as eval run writes it


def test_allow_leaks_and_fail_on_gates_are_judged_like_the_cli() -> None:
    evaluation = evaluate(leaky, QUERIES, EvalOptions(preflight=False, allow_leaks=True, fail_on=["hit_rate@10<0.5"]))
    assert evaluation.passed and evaluation.exit_code == 0
    assert evaluation.result["status"]["state"] == "ok"
    assert [(g.expr, g.failed, g.value) for g in evaluation.gates] == [("hit_rate@10<0.5", False, 1.0)]
    failing = evaluate(leaky, QUERIES, EvalOptions(preflight=False, allow_leaks=True, fail_on=["hit_rate@10<1.1"]))
    assert not failing.passed and failing.verdict["reasons"] == ["FAILED: hit_rate@10 = 1.00 is below 1.10"]


@pytest.mark.parametrize("expr", ["hit_rate@11<0.5", "hit_rate@10 <<"])
def test_a_bad_gate_raises_before_a_query_is_sent(expr: str) -> None:
    calls: list[str] = []

    def recall(query: str, principal: dict[str, str | None], top_k: int, as_of: Any) -> list[str]:
        calls.append(query)
        return []

    with pytest.raises(GateError):
        evaluate(recall, QUERIES, EvalOptions(preflight=False, fail_on=[expr]))
    assert calls == []
