"""Bootstrap confidence intervals and paired significance tests over per-query metric vectors.

* ``bootstrap_ci(values)``: percentile bootstrap 95% CI of the mean of one per-query vector
  (``NaN`` = query excluded from the metric, dropped first).
* ``bootstrap_ratio_cis(nums, dens)``: the engine behind it and behind ``scoring.score``'s ``ci``:
  percentile CIs of ``Σ num / Σ den`` for many columns at once, resampling *queries* (rows) with
  replacement. A mean with exclusions is the ratio ``Σ value·valid / Σ valid``, so every metric of
  the eval set shares one set of resamples. Resamples are drawn as multiplicity weights and applied
  with a matrix product. When few distinct rows exist (``U ≤ n / 8``, typical for 0/1 and
  rank-based metrics), the weights of the U row classes are drawn directly as
  ``Multinomial(n, count_u / n)``, which is the same distribution as resampling rows; otherwise
  they are the ``bincount`` of uniform row indices, in chunks.
* ``paired_compare(a, b)``: two runs on the same eval set, per-query vectors aligned by position:
  mean difference ``mean(a - b)``, its bootstrap CI, and a two-sided paired randomization
  (sign-flip) test, ``p = (1 + #{|mean(s·d)| ≥ |mean(d)|}) / (1 + permutations)``.
  Identical runs give ``p = 1``. Queries where either value is ``NaN`` are dropped.

All randomness comes from ``numpy.random.default_rng(seed)``: same inputs and seed, same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

RESAMPLES = 1000
PERMUTATIONS = 10_000
_CHUNK_CELLS = 4_000_000  # rows x resamples materialised at once (~32 MB of float64)


def _weight_chunks(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield ``(b, n)`` float matrices of bootstrap multiplicities, ``resamples`` rows in total."""
    per = max(1, min(resamples, _CHUNK_CELLS // max(n, 1)))
    done = 0
    while done < resamples:
        b = min(per, resamples - done)
        idx = rng.integers(0, n, size=(b, n))
        idx += (np.arange(b) * n)[:, None]
        yield np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        done += b


def _row_classes(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index of one representative row per class of identical rows, and each class's size.

    Rows are keyed by a random projection (fast); the grouping is then verified exactly and, if two
    different rows ever shared a key, recomputed with an exact byte-wise ``unique``.
    """
    key = data @ np.random.default_rng(12345).random(data.shape[1])
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    if not np.array_equal(data[first][inverse.ravel()], data):
        rows = data.view(np.dtype((np.void, data.dtype.itemsize * data.shape[1]))).ravel()
        _, first, counts = np.unique(rows, return_index=True, return_counts=True)
    return first, counts


def bootstrap_ratio_cis(
    nums: ArrayLike,
    dens: ArrayLike,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> np.ndarray:
    """Percentile CIs of ``Σ nums[:, j] / Σ dens[:, j]`` under row resampling; returns ``(m, 2)``.

    A column whose resampled denominator is 0 in some resample ignores that resample; a column
    with no positive denominator at all gets ``[nan, nan]``.
    """
    num = np.asarray(nums, dtype=np.float64)
    den = np.asarray(dens, dtype=np.float64)
    if num.ndim == 1:
        num, den = num[:, None], den[:, None]
    n, m = num.shape
    if n == 0:
        return np.full((m, 2), np.nan)
    rng = np.random.default_rng(seed)
    den_index: dict[bytes, int] = {}
    den_of = [den_index.setdefault(den[:, j].tobytes(), len(den_index)) for j in range(m)]
    # one representative column per distinct denominator, in class order (class d -> column of its first use)
    unique_dens = den[:, [den_of.index(d) for d in range(len(den_index))]] if m else den
    data = np.ascontiguousarray(np.hstack([num, unique_dens]))
    first, counts = _row_classes(data)
    if len(first) <= n // 8:
        weights = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
        sums = weights @ data[first]
    else:
        sums = np.vstack([w @ data for w in _weight_chunks(n, resamples, rng)])
    with np.errstate(divide="ignore", invalid="ignore"):
        stats = sums[:, :m] / sums[:, [m + d for d in den_of]]
    alpha = (1.0 - level) / 2.0
    out = np.full((m, 2), np.nan)
    for j in range(m):
        col = stats[:, j]
        col = col[np.isfinite(col)]
        if len(col):
            out[j] = np.quantile(col, [alpha, 1.0 - alpha])
    return out


def bootstrap_ci(
    values: ArrayLike, *, resamples: int = RESAMPLES, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of ``values`` (NaN dropped); ``None`` when nothing is left."""
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    if not len(v):
        return None
    lo, hi = bootstrap_ratio_cis(v, np.ones_like(v), resamples=resamples, seed=seed, level=level)[0]
    return float(lo), float(hi)


def sign_flip_p_value(diffs: ArrayLike, *, permutations: int = PERMUTATIONS, seed: int = 0) -> float:
    """Two-sided paired randomization test of ``mean(diffs) = 0`` by random sign flips."""
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    rng = np.random.default_rng(seed)
    per = max(1, min(permutations, _CHUNK_CELLS // n))
    extreme = 0
    done = 0
    while done < permutations:
        b = min(per, permutations - done)
        bits = np.unpackbits(np.frombuffer(rng.bytes(math.ceil(b * n / 8)), dtype=np.uint8))[: b * n]
        signs = 1.0 - 2.0 * bits.reshape(b, n)
        extreme += int(np.count_nonzero(np.abs(signs @ d) / n >= observed - tol))
        done += b
    return (1 + extreme) / (1 + permutations)


def paired_compare(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = RESAMPLES,
    permutations: int = PERMUTATIONS,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, float | int | list[float] | None]:
    """Compare run A with run B on the same queries (vectors aligned by position).

    Returns ``{"n", "mean_a", "mean_b", "diff", "ci": [lo, hi], "p_value"}`` with ``diff = mean(a - b)``.
    """
    va = np.asarray(a, dtype=np.float64)
    vb = np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        raise ValueError(f"paired vectors differ in length: {va.shape} vs {vb.shape}")
    keep = ~(np.isnan(va) | np.isnan(vb))
    va, vb = va[keep], vb[keep]
    n = len(va)
    if n == 0:
        return {"n": 0, "mean_a": None, "mean_b": None, "diff": None, "ci": None, "p_value": None}
    d = va - vb
    ci = bootstrap_ci(d, resamples=resamples, seed=seed, level=level)
    return {
        "n": n,
        "mean_a": float(va.mean()),
        "mean_b": float(vb.mean()),
        "diff": float(d.mean()),
        "ci": list(ci) if ci else None,
        "p_value": sign_flip_p_value(d, permutations=permutations, seed=seed),
    }
