"""Exact one-sided Clopper-Pearson upper bounds for leak rates, and the trials a budget needs.

A stand-in with exactly the API of ``evaluator.metrics.leak_bound`` (being added in parallel): the probe imports
from here until that module is on main, then the import moves there and this file goes.
"""

from __future__ import annotations

import math

from scipy.stats import beta


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float | None:
    """The exact one-sided upper bound of a rate seen ``k`` times in ``n`` trials (None: no trial, not measured).
    ``k = 0`` gives ``1 - (1 - confidence) ** (1 / n)``; ``k = n`` gives 1."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"k must be within 0..n, got k={k}, n={n}")
    if k == n:
        return 1.0
    return float(beta.ppf(confidence, k + 1, n - k))


def trials_for(budget: float, confidence: float = 0.95) -> int:
    """The fewest trials whose bound with no leak seen is at most ``budget`` (a rate in (0, 1))."""
    if not 0 < budget < 1:
        raise ValueError(f"the budget must be a rate between 0 and 1 (exclusive), got {budget}")
    n = max(1, math.ceil(math.log(1 - confidence) / math.log(1 - budget)))
    while (upper_bound(0, n, confidence) or 1.0) > budget:  # float rounding at the edge
        n += 1
    return n
