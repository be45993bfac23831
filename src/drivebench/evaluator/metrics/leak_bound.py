"""leak_bound: how large a leak proportion can still be, given ``k`` leaks seen in ``n`` trials.

"0 leaks" on 200 queries is not "never leaks": a system that leaks to 1 % of queries shows no leak in
200 queries 13 % of the time. The figure that goes with every leak count is the exact (Clopper-Pearson)
one-sided upper confidence bound of the proportion.

Formula: the upper bound ``p_u`` of ``k`` leaks in ``n`` trials at confidence ``c`` (``α = 1 - c``) is the
``p`` at which seeing ``k`` or fewer leaks has probability ``α``::

    P(X ≤ k | n, p_u) = α,  X ~ Binomial(n, p)      i.e.  p_u = Beta⁻¹(c; k + 1, n - k)

solved by bisection on the binomial CDF (summed in log space; no scipy at run time).
``trials_for(budget)`` is its inverse for ``k = 0``, used to size a probe: the smallest ``n`` with
``1 - α^(1/n) ≤ budget``, i.e. ``n = ⌈ln α / ln(1 - budget)⌉``.

Edge cases:
* ``k = 0``: closed form ``1 - α^(1/n)`` ("0 of 200" at 95 %: 0.01487, printed "≤ 1.5 %").
* ``k = n``: 1.0 (nothing rules out that everything leaks).
* ``n = 0``: ``None`` ("not measured": no trial, no bound, never 0 or 1).
* ``k < 0``, ``k > n``, a confidence or budget outside (0, 1): ``ValueError``.

Equals ``scipy.stats.beta.ppf(c, k + 1, n - k)``, ``scipy.stats.binomtest(k, n,
alternative="less").proportion_ci(confidence_level=c, method="exact").high`` and statsmodels'
``proportion_confint(k, n, alpha=2 * (1 - c), method="beta")[1]`` (its two-sided interval at ``2α``).
"""

from __future__ import annotations

import math

_BISECTIONS = 100  # halves [0, 1] to below 1e-30: the bound is exact to float precision


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(X ≤ k)`` for ``X ~ Binomial(n, p)``, ``0 < p < 1``, summed in log space (no overflow for large n)."""
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n = math.lgamma(n + 1)
    terms = [log_n - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q for i in range(k + 1)]
    top = max(terms)
    return math.exp(top) * math.fsum(math.exp(t - top) for t in terms)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")


def upper_bound(k: int, n: int, confidence: float = 0.95) -> float | None:
    """The exact one-sided upper ``confidence`` bound of the proportion ``k / n``; None when ``n = 0``."""
    _check_confidence(confidence)
    if n < 0 or not 0 <= k <= max(n, 0):
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None
    if k == n:
        return 1.0
    alpha = 1.0 - confidence
    if k == 0:
        return -math.expm1(math.log(alpha) / n)  # 1 - α^(1/n), accurate when n is large
    lo, hi = 0.0, 1.0  # P(X ≤ k) falls as p grows: keep P > α at lo, P ≤ α at hi
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _binomial_cdf(k, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def trials_for(budget: float, confidence: float = 0.95) -> int:
    """The smallest number of leak-free trials whose ``upper_bound(0, n, confidence)`` is ``≤ budget``."""
    _check_confidence(confidence)
    if not 0.0 < budget < 1.0:
        raise ValueError(f"budget must be strictly between 0 and 1, got {budget}")
    n = max(1, math.ceil(math.log(1.0 - confidence) / math.log1p(-budget)))

    def bound(trials: int) -> float:
        found = upper_bound(0, trials, confidence)
        assert found is not None  # None only for no trials; here there is at least one
        return found

    # the closed form and upper_bound round differently near an integer: settle on upper_bound's own answer
    while n > 1 and bound(n - 1) <= budget:
        n -= 1
    while bound(n) > budget:
        n += 1
    return n
