"""The figures of a sync run: nearest-rank percentiles, leak seconds, not-measured classes, gate names."""

from __future__ import annotations

import pytest

from drivebench.evaluator.gates import check_gates, parse_gate
from drivebench.evaluator.sync.summary import gate_metrics, nearest_rank, summarize


def _pair(cls: str, kind: str, lag: float | None, *, converged: bool = True, testable: bool = True) -> dict:
    leak = (lag if converged else 120.0) if kind == "revoke" else 0.0
    return {
        "class": cls,
        "kind": kind,
        "lag_s": lag if converged else None,
        "leak_s": leak if testable else None,
        "converged": converged if testable else None,
        "testable": testable,
    }


def test_nearest_rank_percentiles() -> None:
    assert nearest_rank([], 0.95) is None
    assert nearest_rank([3.0], 0.5) == 3.0
    assert nearest_rank([1.0, 2.0, 3.0], 0.5) == 2.0
    assert nearest_rank([1.0, 2.0, 3.0], 0.95) == 3.0  # p95 of three values is the largest
    assert nearest_rank(list(map(float, range(1, 101))), 0.95) == 95.0


def test_summary_counts_leaks_and_never_turns_a_missing_figure_into_zero() -> None:
    pairs = [
        _pair("grant-removed", "revoke", 1.0),
        _pair("grant-removed", "revoke", 3.0),
        _pair("grant-removed", "revoke", None, converged=False),
        _pair("deny-added", "revoke", None, testable=False),
        _pair("grant-added", "grant", 2.5),
    ]
    s = summarize(pairs, requests=40, errors=2, not_planned={"moved-out": 1}, deadline_s=120.0)
    o = s["overall"]
    assert o["pairs"] == 4 and o["not_testable"] == 1 and o["not_planned"] == 1
    # the open leak counts as the deadline: p95 of (1, 3, >=120) is a lower bound, never the 3 s of the others
    assert o["revocation_lag_p50_s"] == 3.0 and o["revocation_lag_p95_s"] == 120.0
    assert o["revocation_lag_max_s"] == 120.0 and o["revocation_lag_is_lower_bound"] is True
    assert s["classes"]["grant-removed"]["lag_p95_s"] == 120.0 and s["classes"]["grant-removed"]["lag_is_lower_bound"]
    assert o["leak_seconds_total"] == 124.0  # 1 + 3 + the whole deadline of the open leak
    assert o["revocations_not_converged"] == 1 and o["not_converged"] == 1
    assert s["classes"]["deny-added"]["n"] == 0 and s["classes"]["deny-added"]["lag_p95_s"] is None
    assert s["classes"]["moved-out"]["not_planned"] == 1 and s["classes"]["moved-out"]["lag_p50_s"] is None
    assert s["classes"]["moved-out"]["not_planned_why"].startswith("the drive offers no document someone sees")
    assert s["classes"]["grant-added"]["leak_seconds"] == 0.0
    assert s["errors"] == {"requests": 40, "failed": 2, "rate": 0.05}


def test_gates_read_the_flat_table_and_fail_on_figures_that_do_not_exist() -> None:
    s = summarize([_pair("grant-removed", "revoke", 4.0)], 10, 0, {})
    result = {"metrics": gate_metrics(s), "errors": s["errors"]}
    (slow,) = check_gates(result, [parse_gate("revocation_lag_p95_s>3")])
    assert slow.failed and slow.value == 4.0
    (ok,) = check_gates(result, [parse_gate("lag_p95_s[grant-removed]>5")])
    assert not ok.failed
    s2 = summarize([_pair("grant-removed", "revoke", None, converged=False)], 10, 0, {})
    (missing,) = check_gates(
        {"metrics": gate_metrics(s2), "errors": s2["errors"]}, [parse_gate("revocation_lag_p95_s>30")]
    )
    assert missing.failed and missing.value is None  # no converged revocation: not measured, never a pass


def test_an_open_leak_fails_every_lag_gate_whatever_its_threshold() -> None:
    from drivebench.evaluator.sync.verdict import sync_gates

    pairs = [_pair("trashed", "revoke", 0.2)] * 30 + [_pair("trashed", "revoke", None, converged=False)]
    s = summarize(pairs, 31, 0, {}, deadline_s=12.0)
    assert s["overall"]["revocation_lag_p95_s"] == 0.2  # 1 of 31 open: p95 falls on a converged pair
    result = {"metrics": gate_metrics(s), "errors": s["errors"], "sync": {**s, "config": {"deadline_s": 12.0}}}
    exprs = ["revocation_lag_p95_s>10", "revocation_lag_p50_s>1000", "lag_max_s[trashed]>=100", "leak_seconds_total>50"]
    for g in sync_gates(result, [parse_gate(x) for x in exprs]):
        assert g.failed and "never took effect within 12 s" in g.message, g
    (below,) = sync_gates(result, [parse_gate("revocation_lag_p95_s<1")])
    assert not below.failed  # an unbounded lag is never below a threshold
    (other,) = sync_gates(result, [parse_gate("lag_p95_s[deny-added]>10")])
    assert other.failed and other.value is None  # a class the run did not measure: not measured, never a pass


@pytest.mark.parametrize("name", ["revocations", "content", "all", "conformance"])
def test_builtin_scenarios_load(name: str) -> None:
    from drivebench.evaluator.sync.scenario import change_classes, load_scenario

    s = load_scenario(name)
    classes = change_classes()
    assert all(cls in classes for cls, _ in s.changes)
    if name == "revocations":
        assert {c for c, _ in s.changes} == {c for c, v in classes.items() if v.kind == "revoke"}
    if name == "all":
        assert {c for c, _ in s.changes} == set(classes)
    assert s.conformance == (name == "conformance")


def test_every_open_leak_count_carries_its_95_percent_upper_bound() -> None:
    """Zero open leaks in 44 revocations is a rate of at most 6.6 % (exact one-sided Clopper-Pearson), never 0;
    without a testable revocation the bound is not measured; a grant left unreflected is no leak."""
    from drivebench.evaluator.sync.outputs import bound_cell, open_leaks

    pairs = [_pair("trashed", "revoke", 0.1)] * 40 + [_pair("purged", "revoke", 0.1)] * 4
    pairs += [_pair("grant-added", "grant", 0.2), _pair("deny-added", "revoke", None, testable=False)]
    s = summarize(pairs, 46, 0, {"answer-cache": 1}, deadline_s=5.0, not_planned_why={"answer-cache": "no endpoint"})
    o = s["overall"]
    assert o["revocations_open_bound"] == 0.0658 and o["bound_confidence"] == 0.95
    assert open_leaks(0, 44, o["revocations_open_bound"]) == "0 of 44 revocations left open (≤ 6.6 %, 95 %)"
    assert s["classes"]["purged"]["open_leak_bound"] == 0.5271  # 0 of 4
    assert s["classes"]["deny-added"]["open_leak_bound"] is None  # nothing testable: not measured
    assert s["classes"]["grant-added"]["open_leak_bound"] is None
    assert s["classes"]["answer-cache"]["open_leak_bound"] is None
    assert s["classes"]["answer-cache"]["not_planned_why"] == "no endpoint"
    assert bound_cell(None) == "not measured"
    leaky = summarize(
        [_pair("trashed", "revoke", None, converged=False)] * 3 + [_pair("trashed", "revoke", 1.0)], 4, 0, {}
    )
    assert leaky["classes"]["trashed"]["open_leak_bound"] == 0.9873  # 3 of 4
    assert (
        summarize([_pair("trashed", "revoke", None, converged=False)], 1, 0, {})["overall"]["revocations_open_bound"]
        == 1.0
    )
    assert gate_metrics(s)["open_leak_bound[purged]"] == 0.5271  # a gate may read it
