"""Aggregation of per-query columns into reported metrics (shared by overall, strata and CIs).

Per-query values live in float columns where ``NaN`` means "this query is excluded from this
metric" (e.g. no gold). Each reported metric is described by a spec:

* ``Mean(col)``: mean over the rows where ``col`` is not NaN (``None`` if there is none);
* ``Ratio(num, den)``: ``Σ num / Σ den`` over rows where both are not NaN (micro average);
* ``ByHop(col, hops)``: object keyed by hop count (as a string), mean of ``col`` per hop count;
* ``HopPositions(prefix, hops)``: ``{h: {p: mean of column prefix+p over rows with hops == h}}``;
* ``Quantile(col, q)``: percentile ``q`` (numpy's linear interpolation) of the non-NaN values;
* ``Null()``: always ``None`` (metric not computable for this run, e.g. leaks without an oracle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from drivebench.evaluator.stats import bootstrap_ratio_cis

Columns = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Mean:
    col: str


@dataclass(frozen=True)
class Ratio:
    num: str
    den: str


@dataclass(frozen=True)
class ByHop:
    col: str
    hops: str = "hops"


@dataclass(frozen=True)
class HopPositions:
    prefix: str
    hops: str = "hops"


@dataclass(frozen=True)
class Quantile:
    col: str
    q: float


@dataclass(frozen=True)
class Null:
    pass


Spec = Mean | Ratio | ByHop | HopPositions | Quantile | Null


def _num_den(cols: Columns, spec: Mean | Ratio, rows: np.ndarray | slice) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(spec, Mean):
        v = cols[spec.col][rows]
        valid = ~np.isnan(v)
        return np.where(valid, v, 0.0), valid.astype(np.float64)
    num, den = cols[spec.num][rows], cols[spec.den][rows]
    valid = ~(np.isnan(num) | np.isnan(den))
    return np.where(valid, num, 0.0), np.where(valid, den, 0.0)


def _value(cols: Columns, spec: Spec, rows: np.ndarray | slice) -> float | dict[str, Any] | None:
    if isinstance(spec, Null):
        return None
    if isinstance(spec, Mean | Ratio):
        num, den = _num_den(cols, spec, rows)
        total = den.sum()
        return float(num.sum() / total) if total > 0 else None
    if isinstance(spec, Quantile):
        v = cols[spec.col][rows]
        v = v[~np.isnan(v)]
        return float(np.percentile(v, spec.q)) if len(v) else None
    hops = cols[spec.hops][rows]
    if isinstance(spec, HopPositions):
        return {
            str(h): {str(p): float(np.mean(cols[f"{spec.prefix}{p}"][rows][hops == h])) for p in range(1, h + 1)}
            for h in sorted({int(x) for x in hops[~np.isnan(hops)]})
        }
    v = cols[spec.col][rows]
    out: dict[str, float] = {}
    for h in sorted({int(x) for x in hops[~np.isnan(v)]}):
        sel = (hops == h) & ~np.isnan(v)
        out[str(h)] = float(v[sel].mean())
    return out


def aggregate(cols: Columns, specs: Mapping[str, Spec], rows: np.ndarray | slice = slice(None)) -> dict[str, Any]:
    """Every metric of ``specs`` over the selected rows."""
    return {name: _value(cols, spec, rows) for name, spec in specs.items()}


def confidence_intervals(
    cols: Columns, specs: Mapping[str, Spec], *, resamples: int, seed: int
) -> dict[str, list[float] | None]:
    """Percentile bootstrap CIs for every ``Mean``/``Ratio`` metric, sharing one set of query resamples."""
    averaged = {name: spec for name, spec in specs.items() if isinstance(spec, Mean | Ratio)}
    names = list(averaged)
    if not names:
        return {}
    pairs = [_num_den(cols, spec, slice(None)) for spec in averaged.values()]
    nums = np.column_stack([p[0] for p in pairs])
    dens = np.column_stack([p[1] for p in pairs])
    cis = bootstrap_ratio_cis(nums, dens, resamples=resamples, seed=seed)
    return {
        name: None if np.isnan(lo) or dens[:, j].sum() == 0 else [float(lo), float(hi)]
        for j, (name, (lo, hi)) in enumerate(zip(names, cis, strict=True))
    }
