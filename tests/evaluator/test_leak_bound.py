"""leak_bound: the exact one-sided upper bound of a leak proportion and the probe size it implies."""

from __future__ import annotations

import math

import pytest
from scipy.stats import beta, binomtest

from drivebench.evaluator.metrics.leak_bound import trials_for, upper_bound


def test_zero_leaks_in_200_is_at_most_one_and_a_half_percent() -> None:
    assert upper_bound(0, 200) == pytest.approx(0.014867, abs=1e-6)
    assert upper_bound(0, 200) == pytest.approx(1 - 0.05 ** (1 / 200), rel=1e-12)


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (0, 30), (0, 100_000), (1, 2), (1, 200), (3, 200), (17, 542), (199, 200), (250, 1000)]
)
@pytest.mark.parametrize("confidence", [0.95, 0.99, 0.8])
def test_the_bound_equals_scipys_exact_interval(k: int, n: int, confidence: float) -> None:
    expected = beta.ppf(confidence, k + 1, n - k)
    assert upper_bound(k, n, confidence) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    exact = binomtest(k, n, alternative="less").proportion_ci(confidence_level=confidence, method="exact").high
    assert upper_bound(k, n, confidence) == pytest.approx(exact, rel=1e-6)


def test_edges_all_leaked_no_trial_and_bad_input() -> None:
    assert upper_bound(5, 5) == 1.0
    assert upper_bound(0, 0) is None  # not measured, never 0
    for k, n in ((-1, 10), (11, 10), (0, -1)):
        with pytest.raises(ValueError):
            upper_bound(k, n)
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError):
            upper_bound(0, 10, confidence)


def test_the_bound_grows_with_leaks_and_shrinks_with_trials() -> None:
    bounds = [upper_bound(k, 300) for k in range(0, 10)]
    assert bounds == sorted(bounds) and len(set(bounds)) == len(bounds)
    assert upper_bound(2, 100) > upper_bound(2, 1000) > 2 / 1000


@pytest.mark.parametrize(("budget", "n"), [(0.001, 2995), (0.01, 299), (0.015, 199), (0.05, 59)])
def test_trials_for_a_budget_is_the_smallest_leak_free_probe_within_it(budget: float, n: int) -> None:
    assert trials_for(budget) == n
    assert upper_bound(0, n) <= budget < upper_bound(0, n - 1)


def test_trials_for_other_confidences_and_bad_budgets() -> None:
    n = trials_for(0.001, confidence=0.99)
    assert n == math.ceil(math.log(0.01) / math.log1p(-0.001))
    assert upper_bound(0, n, 0.99) <= 0.001 < upper_bound(0, n - 1, 0.99)
    assert trials_for(0.99) == 1
    for budget in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError):
            trials_for(budget)
