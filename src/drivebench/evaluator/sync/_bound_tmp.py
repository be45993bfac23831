"""A stand-in for ``evaluator.metrics.leak_bound`` (same API), until that module is on main: the exact
one-sided Clopper-Pearson upper bound of a leak rate, so that "0 open leaks" reads as what it is: none seen
in ``n`` trials, a rate of at most ``upper_bound(0, n)`` at that confidence."""

from __future__ import annotations


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float | None:
    """The one-sided upper bound of the rate behind ``k`` events in ``n`` trials at ``confidence``: the
    ``confidence`` quantile of Beta(k + 1, n - k); 1.0 when every trial showed it; None without a trial (not
    measured)."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"k must be between 0 and n ({n}), got {k}")
    if k == n:
        return 1.0
    from scipy.stats import beta  # only a run that reports a bound pays for the import

    return float(beta.ppf(confidence, k + 1, n - k))
