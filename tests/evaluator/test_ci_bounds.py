"""Every reported interval brackets its metric, and rate intervals stay inside [0, 1].

Regression: ratio CIs with several distinct denominators once divided by the wrong column
(hit_rate_permitted@K reported 1.0 with a CI of [1.08, 1.18]).
"""

from __future__ import annotations

import numpy as np

from drivebench.evaluator.report.sample import sample_result
from drivebench.evaluator.stats import bootstrap_ratio_cis


def test_ratio_cis_with_many_denominators_bracket_the_estimate() -> None:
    rng = np.random.default_rng(3)
    n = 300
    dens = np.column_stack([(rng.random(n) < p).astype(float) for p in (1.0, 0.3, 0.8, 0.3, 0.5)])
    dens[:, 3] = dens[:, 1]  # two columns share a denominator, others differ
    nums = dens * (rng.random((n, 5)) < 0.7)
    cis = bootstrap_ratio_cis(nums, dens, resamples=2000, seed=1)
    for j in range(5):
        point = nums[:, j].sum() / dens[:, j].sum()
        lo, hi = cis[j]
        assert 0.0 <= lo <= point <= hi <= 1.0, (j, lo, point, hi)


def test_reported_cis_bracket_every_metric() -> None:
    result = sample_result()
    checked = 0
    for name, interval in result["ci"].items():
        value = result["metrics"].get(name)
        if interval is None or value is None or name.startswith("latency"):
            continue
        lo, hi = interval
        assert lo - 1e-12 <= value <= hi + 1e-12, (name, lo, value, hi)
        assert lo >= 0.0 and hi <= 1.0, (name, lo, hi)
        checked += 1
    assert checked >= 20
